import Foundation
import GroveCluster
import GroveTestSupport
import Testing
import ZeroMQ

/// A worker sweeps the direct socket files its instance's killed processes left (SIGKILL leaves
/// them), and nothing else: not a live one, not another instance's, not its own, not a file that
/// is no socket.
@Suite("DirectSocketFiles", .timeLimit(.minutes(2)))
struct DirectSocketFilesTests {
    static let own = "edge.00000000000000aa"

    @Test func onlyThisInstancesNamesWithSixteenHexDigitsArePredecessors() {
        let names = [Self.own, "edge.0123456789abcdef", "edge-1.0123456789abcdef", "edge.x.0123456789abcdef",
                     "edge.0123456789ABCDEF", "edge.0123456789abcde", "edge.0123456789abcdef0", "edge", "clients", "ed.0123456789abcdef"]
        #expect(DirectSocketFiles.predecessors(among: names, instance: "edge", own: Self.own) == ["edge.0123456789abcdef"])
        #expect(DirectSocketFiles.predecessors(among: names, instance: "edge-1", own: Self.own) == ["edge-1.0123456789abcdef"])
        #expect(DirectSocketFiles.predecessors(among: names, instance: "edge.x", own: Self.own) == ["edge.x.0123456789abcdef"])
    }

    @Test func theSweepAsksWhoListensAndRemovesTheSilentOnes() {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["edge.0000000000000001", "edge.0000000000000002", "edge-1.0000000000000003", Self.own] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: nil)
        }
        var asked: [String] = []
        var removed: [String] = []
        let result = DirectSocketFiles.sweepLeftovers(
            beside: directory + "/" + Self.own, instance: "edge",
            isListening: { asked.append($0); return $0.hasSuffix("1") },
            remove: { removed.append($0); return true })
        #expect(asked == [directory + "/edge.0000000000000001", directory + "/edge.0000000000000002"])
        #expect(removed == [directory + "/edge.0000000000000002"])
        #expect(result == removed)
    }

    @Test func aLiveSocketAndAFileThatIsNoSocketStay() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let live = directory + "/edge.0000000000000001"
        let (_, socket) = try LocalEndpointTests.bound("ipc://" + live)
        defer { socket.close() }
        // A socket file nobody listens on: what SIGKILL leaves.
        let dead = directory + "/edge.0000000000000002"
        try Self.bindAndAbandon(dead)
        let plain = directory + "/edge.0000000000000003"
        try #require(FileManager.default.createFile(atPath: plain, contents: Data("x".utf8)))

        let removed = DirectSocketFiles.sweepLeftovers(beside: directory + "/" + Self.own, instance: "edge")
        #expect(removed == [dead])
        #expect(FileManager.default.fileExists(atPath: live))
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: plain), "a file that is no socket is never removed")
    }

    /// Leaves a socket file at `path` that nobody listens on: bound with a plain Unix socket,
    /// closed without unlinking.
    static func bindAndAbandon(_ path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
    }
}
