import Foundation
import Glibc
import GroveWire
import Testing

extension EndToEnd {
    /// What any local user can do to the topology's HTTP endpoints (TCP on loopback has no
    /// owner): hold many connections open, send a request head a byte at a time or never. The
    /// coordinator's metrics endpoint and fsm-launch's live view close such connections past a
    /// cap and a deadline (docs/ARCHITECTURE.md, "Metrics" and "Live view"), and keep working.
    @Suite(.serialized, .timeLimit(.minutes(3)))
    struct HostileHTTPTests {
        static let topology = TopologyFile(
            name: "hostile-http", transport: .ipc,
            workers: [.init(name: "edge")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge"),
                       .init(name: "nav", type: "AppNavigator", worker: "edge")],
            metrics: #"{ "listen": "127.0.0.1:0" }"#,
            view: #"{ "listen": "127.0.0.1:0" }"#
        )

        /// `http://host:port…` from fsm-launch's line starting `prefix `.
        static func port(_ cluster: Cluster, line prefix: String) throws -> UInt16 {
            let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix(prefix + " ") })
            let rest = line.dropFirst(prefix.count + 1 + "http://".count)
            let authority = rest.prefix { $0 != "/" }
            return try #require(UInt16(authority.split(separator: ":").last ?? ""))
        }

        /// The TCP connections to `port` that process `pid` accepted: its sockets' inodes among
        /// /proc/net/tcp's connected entries on that local port (one still in the kernel's backlog
        /// has no inode).
        static func accepted(by pid: Int32, port: UInt16) -> Int {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            let inodes = Set(files.compactMap { file -> Substring? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(file)"),
                      target.hasPrefix("socket:[") else { return nil }
                return Substring(target.dropFirst("socket:[".count).dropLast())
            })
            // Read to the end: a /proc file says its size is 0.
            let table = FileHandle(forReadingAtPath: "/proc/net/tcp").map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
            let local = String(format: ":%04X", port)
            return table.split(separator: "\n").dropFirst().filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 9 && fields[1].hasSuffix(local) && fields[3] != "0A" && inodes.contains(fields[9])
            }.count
        }

        @Test func theMetricsEndpointClosesConnectionsPastItsCapAndHeadsThatDoNotCome() async throws {
            try await withCluster(Self.topology) { cluster in
                let port = try Self.port(cluster, line: "metrics")
                // Past the cap: closed at once by the coordinator, unread.
                let idle = try (0..<200).map { _ in try TCPConnection(port: port) }
                try await waitUntil("the coordinator closing the connections past its cap", timeout: .seconds(30)) {
                    idle.filter { $0.closedByPeer() }.count >= 200 - 64
                }
                // The coordinator routes meanwhile.
                try await cluster.send("counter", "increment")
                // Their places freed, a head that never ends gets 408 once its deadline passed (10 s).
                for connection in idle { connection.close() }
                let slow = try await eventually("a connection the coordinator keeps") { () -> TCPConnection? in
                    let connection = try TCPConnection(port: port)
                    connection.send("GET /metr")
                    return connection.closedByPeer() ? nil : connection
                }
                defer { slow.close() }
                let answer = try await eventually("a 408 for a head that never ended", timeout: .seconds(60), interval: .milliseconds(200)) { () -> String? in
                    let text = slow.received()
                    return text.isEmpty ? nil : text
                }
                #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(answer)")
                let url = "http://127.0.0.1:\(port)/metrics"
                try await eventually("a scrape answered once the idle connections went") { try? Scrape.get(url) }
                let padding = 8192 - "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX: \r\n\r\n".utf8.count
                let exact = try Scrape.raw(url, path: nil, extraHeader: "X: " + String(repeating: "a", count: padding))
                #expect(exact.hasPrefix("HTTP/1.1 200"), "\(exact.prefix(100))")
                let over = try Scrape.raw(url, path: nil, extraHeader: "X: " + String(repeating: "a", count: padding + 1))
                #expect(over.hasPrefix("HTTP/1.1 431"), "\(over.prefix(100))")
            }
        }

        @Test func theLiveViewHoldsAtMostItsCapOfConnectionsAndClosesIdleOnes() async throws {
            try await withCluster(Self.topology) { cluster in
                let port = try Self.port(cluster, line: "view")
                let idle = try (0..<200).map { _ in try TCPConnection(port: port) }
                // fsm-launch takes up to its cap; the rest wait in the kernel's backlog.
                try await waitUntil("fsm-launch accepting the view's connections", timeout: .seconds(30)) {
                    Self.accepted(by: cluster.launch.pid, port: port) >= 64
                }
                // A few more at most: NIO accepts several per read before the cap pauses it.
                let accepted = Self.accepted(by: cluster.launch.pid, port: port)
                #expect(accepted < 64 + 16, "fsm-launch accepted \(accepted) of 200 connections")
                // A connection that sends no request is closed after the idle timeout (10 s).
                try await waitUntil("the view closing an idle connection", timeout: .seconds(60), interval: .milliseconds(200)) {
                    idle.contains { $0.closedByPeer() }
                }
                try await cluster.send("counter", "increment")
                for connection in idle { connection.close() }
                // A stranger's action is refused before its body is read: 401, not 413 once a megabyte came.
                let stranger = try await eventually("a connection the view answers") { () -> TCPConnection? in
                    let connection = try TCPConnection(port: port)
                    return connection.closedByPeer() ? nil : connection
                }
                defer { stranger.close() }
                stranger.send("POST /api/send HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Grove-View: 1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(64 << 20)\r\n\r\n" + String(repeating: " ", count: 1 << 18))
                let answer = try await eventually("the view's answer to a stranger's action") { () -> String? in
                    let text = stranger.received()
                    return text.contains("\r\n\r\n") ? text : nil
                }
                #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer.prefix(200))")
                // The launching user's token is printed on stdout, never logged.
                let url = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("view ") })
                let token = try #require(url.split(separator: "token=").last)
                #expect(!cluster.launch.stderr.contains(token))
            }
        }

        /// Viewers that open the events stream and never read: each holds at most
        /// `LiveViewHub.viewerBacklogBytes` (1 MiB) of updates before fsm-launch closes its stream
        /// (its browser would reconnect and start from a snapshot). Counted in updates, 20 of
        /// them took fsm-launch from 48 to 270 MB in 30 s.
        @Test func viewersThatStopReadingCostFsmLaunchTheirBoundInBytes() async throws {
            try await withCluster(Self.topology) { cluster in
                let port = try Self.port(cluster, line: "view")
                let url = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("view ") })
                let token = try #require(url.split(separator: "token=").last)
                // A 60 KB state, shown to every viewer at each of its changes.
                let sender = try RawClient(endpoint: cluster.clients)
                let title = String(repeating: "x", count: 60_000)
                var correlation: UInt64 = 0
                func change(_ event: String) throws {
                    correlation += 1
                    let reply = try sender.request(WireMessage(Header(.event, correlation: correlation), address: "nav",
                                                               payload: Array(event.utf8)))
                    #expect(reply.header.kind == .state, "\(event.prefix(80)): \(String(decoding: reply.payload.prefix(300), as: UTF8.self))")
                }
                try change(#"{"push":{"_0":{"detail":{"_0":{"id":"i","title":"\#(title)"}}}}}"#)
                let before = try WatcherBytesTests.memory(of: cluster.launch.pid)
                let silent = try (0..<20).map { _ in
                    let connection = try TCPConnection(port: port, receiveBuffer: 4096)
                    connection.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: grove_view=\(token)\r\n\r\n")
                    return connection
                }
                defer { for connection in silent { connection.close() } }
                try await waitUntil("fsm-launch accepting the silent viewers", timeout: .seconds(30)) {
                    Self.accepted(by: cluster.launch.pid, port: port) >= 20
                }
                // 400 changes: 24 MB of updates for each viewer, 480 MB for all of them.
                for index in 0..<400 {
                    try change(index % 2 == 0 ? #"{"presentModal":{"_0":{"settings":{}}}}"# : #"{"dismissModal":{}}"#)
                }
                let after = try WatcherBytesTests.memory(of: cluster.launch.pid)
                let bound = before.now + 20 * (1 << 20) + (64 << 20)
                print("fsm-launch's RSS was \(before.now >> 20) MiB before, peaked at \(after.peak >> 20) MiB; the bound is \(bound >> 20) MiB")
                #expect(after.peak < bound, "fsm-launch peaked at \(after.peak >> 20) MiB with 20 viewers that do not read")
                // A viewer that reads is still served.
                let page = try Scrape.raw("http://127.0.0.1:\(port)/", path: nil, extraHeader: "Cookie: grove_view=\(token)\r\nConnection: close")
                #expect(page.hasPrefix("HTTP/1.1 200"), "\(page.prefix(200))")
            }
        }
    }
}

/// A TCP connection to loopback held open by the test, read without blocking.
final class TCPConnection {
    private let fd: Int32
    private var isOpen = true
    private var closed = false
    private var bytes: [UInt8] = []

    /// - Parameter receiveBuffer: The socket's receive buffer in bytes (`SO_RCVBUF`, set
    ///   before connecting), for a peer that takes little before the sender must wait.
    init(port: UInt16, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw HarnessError("connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    func send(_ text: String) {
        let data = Array(text.utf8)
        _ = Glibc.send(fd, data, data.count, Int32(MSG_NOSIGNAL))
    }

    /// Reads what came without waiting; whether the peer closed (or reset) the connection.
    func closedByPeer() -> Bool {
        guard isOpen, !closed else { return closed }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                bytes += buffer[..<count]
                continue
            }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { closed = true }
            return closed
        }
    }

    /// Everything received so far.
    func received() -> String {
        _ = closedByPeer()
        return String(decoding: bytes, as: UTF8.self)
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }
}
