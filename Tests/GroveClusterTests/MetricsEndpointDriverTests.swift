@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing
import ZeroMQ

/// The metrics endpoint through the coordinator's real driver on an `EmbeddedLoop`, its STREAM
/// socket played by the test: answers and closes, the head deadline at the loop's ticks, and one
/// rendering shared by the scrapes of a flood.
@Suite("Metrics: the endpoint through the driver", .timeLimit(.minutes(2)))
struct MetricsEndpointDriverTests {
    static let get = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    /// A cluster with metrics on and a STREAM socket for them.
    static func cluster() -> (InMemoryCluster, SocketID) {
        let cluster = MetricsDriverTests.cluster()
        let socket = cluster.loop.add(.stream)
        cluster.driver.metricsSocket = socket
        return (cluster, socket)
    }

    static func frame(_ cluster: InMemoryCluster, _ socket: SocketID, _ peer: [UInt8], _ bytes: [UInt8]) {
        cluster.loop.receive([Inbound(socket: socket, frames: [peer, bytes])])
    }

    /// What was sent to each peer: its answer's text, or "" for a close alone.
    static func sent(_ cluster: InMemoryCluster, _ socket: SocketID) -> [[UInt8]: String] {
        var answers: [[UInt8]: String] = [:]
        for frames in cluster.loop.readOutbound(on: socket) {
            answers[frames[0], default: ""] += String(decoding: frames[1], as: UTF8.self)
        }
        return answers
    }

    @Test func anIdleConnectionGets408AtTheTickPastItsDeadline() {
        let (cluster, socket) = Self.cluster()
        Self.frame(cluster, socket, [1], [])
        Self.frame(cluster, socket, [1], Array("GET /met".utf8))
        cluster.advance(by: ScrapeConnections.deadline - .milliseconds(100))
        #expect(Self.sent(cluster, socket).isEmpty)
        cluster.advance(by: .milliseconds(200))
        #expect(Self.sent(cluster, socket)[[1]]?.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") == true)
        #expect(cluster.driver.scrapes.count == 0)
    }

    @Test func scrapesWithinTheReuseTimeShareOneRendering() throws {
        let (cluster, socket) = Self.cluster()
        func scrape(_ peer: UInt8) -> String {
            Self.frame(cluster, socket, [peer], [])
            Self.frame(cluster, socket, [peer], Self.get)
            return Self.sent(cluster, socket)[[peer]] ?? ""
        }
        func report(_ delta: Int) throws {
            let payload = try WireJSON.encode(MetricsReport(counters: [.init(name: "grove_worker_events_total", labels: ["machine_type": "Counter"], delta: delta)]))
            cluster.fromWorker("data-1", MetricsDriverTests.heartbeat("data-1", payload))
        }
        let series = #"grove_worker_events_total{machine_type="Counter",worker="data-1"}"#
        try report(2)
        let first = scrape(1)
        #expect(first.contains("\(series) 2"), "\(first)")
        try report(3)
        // At the same time: the same text, not rendered again.
        #expect(scrape(2) == first)
        cluster.advance(by: CoordinatorDriver.renderReuse)
        #expect(scrape(3).contains("\(series) 5"))
    }
}
