import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// A machine whose state outgrows the coordinator's frame limit (`limits.messageBytes`),
    /// against the real processes: the reviewer's run of issue 34, scaled down. Before, the
    /// worker sent the state reply anyway, the coordinator's ZeroMQ dropped its connection, the
    /// worker was declared lost, and every later request to that address went unanswered.
    @Suite(.timeLimit(.minutes(3)))
    struct OversizedReplyTests {
        static let topology: TopologyFile = {
            var topology = TopologyFile(
                name: "oversized", transport: .tcp, workers: [.init(name: "main")],
                machines: [.init(name: "nav", type: "AppNavigator", worker: "main", keyed: true)])
            topology.limits = #"{ "messageBytes": 8192, "payloadBytes": 4096 }"#
            return topology
        }()

        /// A `push` of a detail screen with a title of `size` bytes: the state grows by as much.
        static func push(_ size: Int) -> String {
            #"{"push":{"_0":{"detail":{"_0":{"id":"i","title":"\#(String(repeating: "x", count: size))"}}}}}"#
        }

        @Test func aStateOverTheLimitIsAnsweredAndTheWorkerStays() async throws {
            try await withCluster(Self.topology) { cluster in
                // Watching the address too: its state changes are too large to publish as well.
                let watcher = try await cluster.watch(["worker:", "state:nav/"])
                try await cluster.send("nav/a", Self.push(3000))
                try await cluster.send("nav/a", Self.push(3000))

                // The third state is over 8192 bytes: an error in its place, under its id.
                let third = try await cluster.fsmSend(["send", "nav/a", Self.push(3000)])
                #expect(third.status == 1, "\(third)")
                #expect(third.stderr.contains("reply-too-large"), "\(third)")
                #expect(third.stderr.contains("over limits.messageBytes 8192"), "\(third)")
                #expect(third.stderr.contains("committed"), "\(third)")

                // A later get of that address gets the same error rather than silence, and the
                // event was applied: the state the error speaks of is the grown one.
                let get = try await cluster.fsmSend(["state", "nav/a"])
                #expect(get.status == 1 && get.stderr.contains("reply-too-large"), "\(get)")
                // Other addresses on the same worker keep answering.
                let other = try await cluster.send("nav/b", Self.push(10))
                #expect(other.objectValue != nil, "\(other)")

                // The worker said why, once, without the state.
                try await cluster.waitForLog("a state reply for nav/a was not sent")
                #expect(!cluster.log.contains(String(repeating: "x", count: 200)), "a payload reached the log")

                // And it was never declared lost: everything published before the mark came.
                let mark = try await cluster.mark(watcher)
                let lost = watcher.events.prefix(mark).filter { $0.isWorker("main", "lost") }
                #expect(lost.isEmpty, "\(lost.map(\.description))")
            }
        }
    }
}
