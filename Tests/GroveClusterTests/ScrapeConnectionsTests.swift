@testable import GroveCoordinator
import Testing

/// The metrics endpoint's connections without sockets: a cap on how many are open, a deadline
/// for the request head, each byte scanned once, and nothing read after the answer.
@Suite("Metrics: scrape connections", .timeLimit(.minutes(2)))
struct ScrapeConnectionsTests {
    static let start = ContinuousClock.now
    static let get = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    static func peer(_ number: Int) -> [UInt8] { [0, UInt8(number >> 8), UInt8(number & 0xff)] }

    @Test func connectionsPastTheLimitAreClosedAtOnceAndAClosedOneFreesItsPlace() {
        var scrapes = ScrapeConnections()
        for number in 0..<ScrapeConnections.limit {
            #expect(scrapes.received(peer: Self.peer(number), bytes: [], now: Self.start) == nil)
        }
        let extra = Self.peer(ScrapeConnections.limit)
        #expect(scrapes.received(peer: extra, bytes: [], now: Self.start) == .close(peer: extra))
        // What the closed one sends after is not read.
        #expect(scrapes.received(peer: extra, bytes: Self.get, now: Self.start) == nil)
        #expect(scrapes.count == ScrapeConnections.limit)
        // A client that closes frees its place.
        #expect(scrapes.received(peer: Self.peer(0), bytes: [], now: Self.start) == nil)
        #expect(scrapes.count == ScrapeConnections.limit - 1)
        #expect(scrapes.received(peer: extra, bytes: [], now: Self.start) == nil)
        #expect(scrapes.received(peer: extra, bytes: Self.get, now: Self.start) == .answer(peer: extra, request: Self.get))
    }

    @Test func aHeadThatDoesNotComeInTimeGets408AndAnAnsweredOneIsLetGo() {
        var scrapes = ScrapeConnections()
        let idle = Self.peer(1), slow = Self.peer(2), done = Self.peer(3)
        for peer in [idle, slow, done] { _ = scrapes.received(peer: peer, bytes: [], now: Self.start) }
        // A byte at a time, as slowloris sends: never whole before the deadline.
        for (second, byte) in Self.get.prefix(8).enumerated() {
            #expect(scrapes.received(peer: slow, bytes: [byte], now: Self.start + .seconds(second)) == nil)
        }
        #expect(scrapes.received(peer: done, bytes: Self.get, now: Self.start) == .answer(peer: done, request: Self.get))
        // A pipelined second request on the answered connection is not read.
        #expect(scrapes.received(peer: done, bytes: Self.get, now: Self.start) == nil)
        #expect(scrapes.expire(now: Self.start + ScrapeConnections.deadline - .milliseconds(1)).isEmpty)
        let expired = scrapes.expire(now: Self.start + ScrapeConnections.deadline)
        #expect(Set(expired.map(\.peer)) == [idle, slow, done])
        #expect(expired.contains(.reply(peer: idle, bytes: MetricsHTTP.timedOut)))
        #expect(expired.contains(.reply(peer: slow, bytes: MetricsHTTP.timedOut)))
        #expect(expired.contains(.close(peer: done)))
        #expect(scrapes.count == 0)
        #expect(String(decoding: MetricsHTTP.timedOut, as: UTF8.self).hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
    }

    @Test func aHeadOfExactlyTheLimitIsAnsweredAndOneByteMoreIs431HoweverItComes() throws {
        let end = Array("\r\n\r\n".utf8)
        func head(_ size: Int) -> [UInt8] {
            let line = Array("GET /metrics HTTP/1.1\r\nX: ".utf8)
            return line + Array(repeating: UInt8(ascii: "a"), count: size - line.count - end.count) + end
        }
        for (size, status) in [(MetricsHTTP.headLimit, "200"), (MetricsHTTP.headLimit + 1, "431")] {
            // In one piece, and a byte at a time.
            for chunk in [size, 1] {
                var scrapes = ScrapeConnections()
                _ = scrapes.received(peer: Self.peer(1), bytes: [], now: Self.start)
                var answers: [ScrapeConnections.Action] = []
                var rest = head(size)[...]
                while !rest.isEmpty {
                    if let action = scrapes.received(peer: Self.peer(1), bytes: Array(rest.prefix(chunk)), now: Self.start) { answers.append(action) }
                    rest = rest.dropFirst(chunk)
                }
                #expect(answers.count == 1)
                guard case .answer(_, let request)? = answers.first else { Issue.record("no answer for \(size) in \(chunk)s"); continue }
                #expect(request.count <= MetricsHTTP.headLimit + 1)
                let response = try #require(MetricsHTTP.response(to: request, body: { [] }))
                #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 \(status)"), "\(size) in \(chunk)s")
            }
        }
    }

    @Test func aHugeFirstFrameIsCutAtTheLimit() {
        var scrapes = ScrapeConnections()
        _ = scrapes.received(peer: Self.peer(1), bytes: [], now: Self.start)
        let flood = Array(repeating: UInt8(ascii: "a"), count: 1 << 20)
        guard case .answer(_, let request)? = scrapes.received(peer: Self.peer(1), bytes: flood, now: Self.start) else {
            Issue.record("a megabyte with no head end was not answered"); return
        }
        #expect(request.count == MetricsHTTP.headLimit + 1)
    }
}

extension ScrapeConnections.Action {
    var peer: [UInt8] {
        switch self {
        case .answer(let peer, _), .reply(let peer, _), .close(let peer): peer
        }
    }
}
