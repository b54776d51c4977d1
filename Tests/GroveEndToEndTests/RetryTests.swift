import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 37, item 3: `fsm-load --retry` gives every event an idempotency key and resends it
    /// with the same key after `worker-lost`, `unavailable` or a timeout; the worker answers a
    /// key it applied already with its first answer. Over ipc, durability `state`, the SQLite
    /// store in the test's directory.
    @Suite(.timeLimit(.minutes(3)))
    struct RetryTests {
        /// The count of `counters/0`, 0 until it is spawned.
        static func count(_ cluster: Cluster) async -> Int? {
            switch (try? await cluster.state("counters/0"))?["count"] {
            case .integer(let count)?: return Int(count)
            case .number(let count)?: return Int(count)
            default: return nil
            }
        }

        /// Waits until `w` runs as a process other than `old`, and returns it.
        static func restarted(_ cluster: Cluster, after old: Int32) async throws -> Int32 {
            var current: Int32 = old
            try await waitUntil("w to come back as a new process", timeout: .seconds(30)) {
                guard let pid = try? await cluster.workerPID("w"), pid != old else { return false }
                current = pid
                return true
            }
            return current
        }

        /// A keyed increment of `address` with `sequence` of one fixed client, as a raw request.
        static func keyed(_ address: String, sequence: UInt64, correlation: UInt64) -> WireMessage {
            WireMessage(Header(.event, flags: .keyed, correlation: correlation), address: address,
                        payload: IdempotencyKey(client: Array("e2e-client".utf8), sequence: sequence).prefixed(Array(#""increment""#.utf8)))
        }

        /// The answer a resend gets after the worker that applied it was killed: the first one,
        /// read from the store, and the count shows the event once.
        @Test func aRepeatAfterTheWorkerWasKilledGetsTheFirstAnswerFromTheStore() async throws {
            try await withCluster(DurabilityTests.counters) { cluster in
                let endpoint = cluster.clients
                let first = try await onThread { () throws -> [String] in
                    let client = try RawClient(endpoint: endpoint)
                    return try [Self.keyed("counter", sequence: 1, correlation: 1), Self.keyed("counters/a", sequence: 2, correlation: 2),
                                Self.keyed("counter", sequence: 3, correlation: 3)]
                        .map { String(decoding: try client.request($0).payload, as: UTF8.self) }
                }
                #expect(first == [#"{"count":1}"#, #"{"count":1}"#, #"{"count":2}"#])
                let worker = try await cluster.workerPID("w")
                kill(worker, SIGKILL)
                _ = try await Self.restarted(cluster, after: worker)
                let again = try await onThread { () throws -> [String] in
                    let client = try RawClient(endpoint: endpoint)
                    // Repeats (the answers the killed worker may never have sent), then a new key.
                    return try [Self.keyed("counter", sequence: 1, correlation: 11), Self.keyed("counters/a", sequence: 2, correlation: 12),
                                Self.keyed("counter", sequence: 4, correlation: 13)]
                        .map { String(decoding: try client.request($0, timeout: .seconds(30)).payload, as: UTF8.self) }
                }
                #expect(again == [#"{"count":1}"#, #"{"count":1}"#, #"{"count":3}"#])
                #expect(try await cluster.state("counters/a") == json(#"{"count":1}"#))
            }
        }

        /// Makes the worker die right after its next commit of keyed events, before their replies
        /// leave (its test hook, ``dieAfterCommit``): the events are applied and the load will send
        /// them again, so a worker that applied a repeat twice fails the load's check.
        static func dieAfterNextCommit(_ trigger: String) throws {
            try Data().write(to: URL(fileURLWithPath: trigger))
        }

        /// `GROVE_TEST_DIE_AFTER_COMMIT`, the worker's test hook (`DeathAfterCommit`).
        static let dieAfterCommit = "GROVE_TEST_DIE_AFTER_COMMIT"

        @Test func theWorkerKilledTwiceLosesNoAcknowledgedEventAndAppliesNoneTwice() async throws {
            // Each death lands between a commit and its replies, not wherever a kill -9 falls:
            // without that, a run whose kills hit no applied, unanswered event passed with
            // deduplication switched off.
            let trigger = FileManager.default.temporaryDirectory.appendingPathComponent("grove-retry-\(UUID().uuidString)").path
            defer { unlink(trigger) }
            var topology = DurabilityTests.counters
            topology.environment[Self.dieAfterCommit] = trigger
            try await withCluster(topology) { cluster in
                let first = try await cluster.workerPID("w")
                let load = try await ChildProcess(
                    Products.load, ["--endpoint", cluster.clients, "--machine", "counters", "--machines", "100", "--mode", "reply",
                                    "--no-baseline", "--batch", "100", "--window", "2000", "--duration", "8", "--retry"],
                    outputIn: cluster.directory, label: "fsm-load")
                defer { load.stop(grace: .seconds(1)) }
                try await waitUntil("the load to reach the counters") { (await Self.count(cluster) ?? 0) > 0 }
                try Self.dieAfterNextCommit(trigger)
                let second = try await Self.restarted(cluster, after: first)
                #expect(!FileManager.default.fileExists(atPath: trigger), "the worker came back without its hook firing")
                // The load goes on against the new process before it dies in turn.
                let reached = await Self.count(cluster) ?? 0
                try await waitUntil("the load to go on after the first death") { (await Self.count(cluster) ?? 0) > reached }
                try Self.dieAfterNextCommit(trigger)
                _ = try await Self.restarted(cluster, after: second)
                #expect(!FileManager.default.fileExists(atPath: trigger), "the worker came back without its hook firing")
                let status = await load.waitForExit(timeout: .seconds(120))
                let output = "\(load.stdout)\n\(load.stderr)"
                // Nothing acknowledged lost: fsm-load says so in either of its two verdicts.
                #expect(load.stdout.contains("every acknowledged event applied") || load.stdout.contains(" 0 acknowledged event(s) lost"),
                        "\(output)")
                // The deaths cost answers, so events were sent again: the keys were put to work.
                #expect(load.stdout.contains("copies with their event's idempotency key"), "\(output)")
                // None applied twice: a repeat that came back behind more than the 128 answers an
                // instance keeps (a whole batch's worth, after a death) was once applied again.
                #expect(load.stdout.contains("every acknowledged event applied, none twice"), "\(output)")
                #expect(status == 0, "fsm-load: \(output)")
            }
        }

        /// Under backpressure the coordinator refuses copies `busy` here and there among those it
        /// forwards, and each leaves a hole under the newer events applied until it comes back.
        /// With the whole window (3,000) on one address, the holes went past the 64 runs a worker
        /// keeps per client, and copies that never ran were refused `key-too-old` (5,227 of
        /// 11,984). fsm-load keeps at most that many events per address unanswered: none is.
        @Test func aLoadOnOneAddressUnderBackpressureHasNoNewEventRefusedKeyTooOld() async throws {
            var topology = DurabilityTests.counters
            topology.workerOutbox = 20
            try await withCluster(topology) { cluster in
                let load = try await ChildProcess(
                    Products.load, ["--endpoint", cluster.clients, "--machine", "counters", "--machines", "1", "--connections", "1",
                                    "--mode", "reply", "--no-baseline", "--window", "3000", "--duration", "3", "--retry"],
                    outputIn: cluster.directory, label: "fsm-load")
                defer { load.stop(grace: .seconds(1)) }
                _ = await load.waitForExit(timeout: .seconds(150))
                let output = "\(load.stdout)\n\(load.stderr)"
                // The coordinator did refuse copies: the case this is about happened.
                #expect(load.stdout.contains("copies with their event's idempotency key"), "\(output)")
                #expect(!output.contains("key-too-old"), "\(output)")
                #expect(load.stdout.contains("every acknowledged event applied, none twice"), "\(output)")
            }
        }
    }
}
