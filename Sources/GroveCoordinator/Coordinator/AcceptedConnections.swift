import Foundation
import Glibc

/// The connections this process accepted on one of its endpoints, found among its open file
/// descriptors by their local address, and shut down: libzmq has no call that drops one peer of
/// a bound socket, but it notices a connection shut down under it, closes it and frees what it
/// held for it (an XPUB's subscriptions), as if the peer had gone. Used rarely (a watcher past
/// its bounds), so a scan of `/proc/self/fd` costs nothing that matters. Linux only.
enum AcceptedConnections {
    /// Shuts down, both ways, every connected socket of this process whose local address is
    /// `endpoint` (a `tcp://host:port` or `ipc://path` ZeroMQ endpoint, as bound). The listening
    /// socket is left alone; so are connections this process made to the endpoint, whose local
    /// address is their own.
    /// - Returns: How many were shut down.
    static func shutDown(acceptedOn endpoint: String) -> Int {
        guard let local = LocalAddress(endpoint),
              let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        var count = 0
        for entry in entries {
            guard let fd = Int32(entry), local.isAccepted(fd) else { continue }
            if shutdown(fd, Int32(SHUT_RDWR)) == 0 { count += 1 }
        }
        return count
    }

    /// A bound endpoint's local address, as `getsockname` gives it for the connections accepted on it.
    enum LocalAddress {
        /// A tcp port, and the IPv4 or IPv6 address bound (`nil` for a wildcard).
        case tcp(port: UInt16, host: [UInt8]?)
        /// An ipc socket's path bytes (an abstract one's start with a zero byte).
        case ipc([UInt8])

        init?(_ endpoint: String) {
            if endpoint.hasPrefix("tcp://") {
                let rest = endpoint.dropFirst("tcp://".count)
                guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]) else { return nil }
                var host = String(rest[..<colon])
                if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
                self = .tcp(port: port, host: Self.numeric(host))
            } else if endpoint.hasPrefix("ipc://") {
                let path = endpoint.dropFirst("ipc://".count)
                self = .ipc(path.hasPrefix("@") ? [0] + Array(path.dropFirst().utf8) : Array(path.utf8))
            } else {
                return nil
            }
        }

        /// The bytes of a numeric host, `nil` for a wildcard or a name.
        private static func numeric(_ host: String) -> [UInt8]? {
            var v4 = in_addr()
            if inet_pton(AF_INET, host, &v4) == 1 {
                return v4.s_addr == 0 ? nil : withUnsafeBytes(of: v4) { Array($0) }
            }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, host, &v6) == 1 {
                let bytes = withUnsafeBytes(of: v6) { Array($0) }
                return bytes.allSatisfy { $0 == 0 } ? nil : bytes
            }
            return nil
        }

        /// Whether `fd` is a connected, not listening, socket whose local address is this one.
        func isAccepted(_ fd: Int32) -> Bool {
            var listening: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening == 0 else { return false }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard named == 0, matches(storage, length: Int(length)) else { return false }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            return withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &peerLength) }
            } == 0
        }

        private func matches(_ storage: sockaddr_storage, length: Int) -> Bool {
            var storage = storage
            switch self {
            case .tcp(let port, let host):
                switch Int32(storage.ss_family) {
                case AF_INET:
                    let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
                    guard UInt16(bigEndian: address.sin_port) == port else { return false }
                    return host.map { $0 == withUnsafeBytes(of: address.sin_addr) { Array($0) } } ?? true
                case AF_INET6:
                    let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
                    guard UInt16(bigEndian: address.sin6_port) == port else { return false }
                    return host.map { $0 == withUnsafeBytes(of: address.sin6_addr) { Array($0) } } ?? true
                default:
                    return false
                }
            case .ipc(let path):
                guard Int32(storage.ss_family) == AF_UNIX else { return false }
                let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
                guard length > offset else { return false }
                var bytes = withUnsafeBytes(of: &storage) { Array($0[offset..<length]) }
                // A path is given with its terminating zero; an abstract name is not.
                if bytes.first != 0, bytes.last == 0 { bytes.removeLast() }
                return bytes == path
            }
        }
    }
}
