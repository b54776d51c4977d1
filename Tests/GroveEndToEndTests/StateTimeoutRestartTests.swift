import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 36, item 1: a durable machine's state timeout is a timer under a reserved id, so a
    /// worker killed with SIGKILL while it is pending comes back with it: it fires at its
    /// original deadline, and leaving the state after the restart still cancels it. Real
    /// processes over ipc, durability `state`, `AnswerDeadline` of `fsm-worker
    /// --with-test-machines`. Which of two timers fired first is read from the machine's
    /// `seen`, never from a clock in the test.
    @Suite(.timeLimit(.minutes(2)))
    struct StateTimeoutRestartTests {
        static func topology(_ name: String) -> TopologyFile {
            TopologyFile(
                name: name, transport: .ipc,
                workers: [.init(name: "w", arguments: ["--with-test-machines"])],
                machines: [.init(name: "question", type: "AnswerDeadline", worker: "w", durability: "state")]
            )
        }

        /// The deadlines (ns since 1970, the worker's clock) of the first `count` `started`
        /// events of `address`'s timer `id` that `watcher` printed. A restarted worker, watched,
        /// announces the timers it restored as started.
        static func timerDeadlines(_ watcher: EventWatcher, _ address: String, id: JSONValue, count: Int) async throws -> [Int64] {
            let started = try await watcher.waitFor("\(address)'s timer \(id) started", count: count) {
                $0.isEffect(address, "started") && $0.effect == id
            }
            return try started.prefix(count).map { event in
                guard case .integer(let deadline)? = event.payload["deadlineNs"] else {
                    throw HarnessError("a timer's started event without deadlineNs: \(event)")
                }
                return deadline
            }
        }

        /// Nanoseconds since 1970 now, on this machine's clock (the workers').
        static var nowNs: Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000_000) }

        static let eventTimeoutID = json(#"{"reserved":"event-timeout"}"#)

        /// Milliseconds from now until `instant`, at least `floor`.
        static func milliseconds(until instant: ContinuousClock.Instant, floor: Int) -> Int {
            let left = instant - ContinuousClock.now
            return max(floor, Int(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
        }

        @Test func aStateTimeoutPendingWhenItsWorkerIsKilledFiresAtItsOriginalDeadline() async throws {
            try await withCluster(Self.topology("state-timeout-fires")) { cluster in
                let armed = ContinuousClock.now
                let deadline = armed + .seconds(4)
                #expect(try await cluster.send("question", #"{"arm":{"ms":4000}}"#)["phase"] == json(#""waiting""#))
                // Time itself is what this waits for: the restore then comes a good while after
                // the arming, so a timeout armed afresh on restore would fire after the probe.
                try await Task.sleep(until: armed + .milliseconds(1500))
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let restored = try await cluster.state("question")
                if ContinuousClock.now < deadline {
                    #expect(restored["phase"] == json(#""waiting""#), "before its deadline it has not fired: \(restored)")
                }
                // A named timer due a second after the original deadline: the state timeout
                // fires first when it kept that deadline (or at once on restore, if the restart
                // took longer); armed afresh on restore, it would fire 4 s after it, later.
                let probe = Self.milliseconds(until: deadline + .seconds(1), floor: 500)
                _ = try await cluster.send("question", #"{"probe":{"ms":\#(probe)}}"#)
                let done = try await cluster.waitForState("question", "expired and probed", timeout: .seconds(30)) {
                    $0["seen"]?.arrayValue?.count == 2
                }
                #expect(done["seen"] == json(#"["expired","probed"]"#), "\(done)")
                #expect(done["phase"] == json(#""expired""#), "\(done)")
                #expect(ContinuousClock.now >= deadline, "never before its deadline")
            }
        }

        @Test func leavingTheStateAfterTheRestartCancelsItsStateTimeout() async throws {
            try await withCluster(Self.topology("state-timeout-cancelled")) { cluster in
                let deadline = ContinuousClock.now + .seconds(10)
                #expect(try await cluster.send("question", #"{"arm":{"ms":10000}}"#)["phase"] == json(#""waiting""#))
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let answered = try await cluster.send("question", "answer")
                #expect(answered["phase"] == json(#""answered""#), "answered before the deadline: \(answered)")
                // Due after the state timeout's deadline: had the answer not cancelled it, its
                // `expired` would come first (`expired` is handled in every phase).
                let probe = Self.milliseconds(until: deadline + .seconds(1), floor: 500)
                _ = try await cluster.send("question", #"{"probe":{"ms":\#(probe)}}"#)
                let done = try await cluster.waitForState("question", "probed", timeout: .seconds(30)) {
                    $0["seen"]?.arrayValue?.isEmpty == false
                }
                #expect(done["seen"] == json(#"["probed"]"#), "\(done)")
                #expect(done["phase"] == json(#""answered""#), "\(done)")
            }
        }
        /// The event timeout, restored: pending when its worker is killed with SIGKILL, it comes
        /// back at its original deadline (the restarted worker announces it with the same
        /// `deadlineNs`) and, with no event in between, fires there. Reading the state is not an
        /// event.
        @Test func anEventTimeoutPendingWhenItsWorkerIsKilledFiresAtItsDeadlineWhenNothingComes() async throws {
            try await withCluster(Self.topology("event-timeout-fires")) { cluster in
                let watcher = try await cluster.watch(["effect:question"])
                _ = try await cluster.send("question", #"{"quiet":{"ms":6000}}"#)
                let deadline = try await Self.timerDeadlines(watcher, "question", id: Self.eventTimeoutID, count: 1)[0]
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                let killedEarly = Self.nowNs < deadline
                #expect(killedEarly, "the worker was killed before the deadline")

                let deadlines = try await Self.timerDeadlines(watcher, "question", id: Self.eventTimeoutID, count: 2)
                #expect(deadlines[1] == deadline, "restored at its original deadline")
                let done = try await cluster.waitForState("question", "expired", timeout: .seconds(30)) {
                    $0["seen"]?.arrayValue?.isEmpty == false
                }
                #expect(done["seen"] == json(#"["expired"]"#), "\(done)")
                #expect(Self.nowNs >= deadline, "never before its deadline")
            }
        }

        /// The event timeout, restored and then ended by the next event, as any event ends it:
        /// the `probe` sent after the restart cancels it, so only the probe's timer, due a second
        /// after the event timeout's deadline, fires.
        @Test func anEventAfterTheRestartCancelsARestoredEventTimeout() async throws {
            try await withCluster(Self.topology("event-timeout-cancelled")) { cluster in
                let watcher = try await cluster.watch(["effect:question"])
                _ = try await cluster.send("question", #"{"quiet":{"ms":8000}}"#)
                let deadline = try await Self.timerDeadlines(watcher, "question", id: Self.eventTimeoutID, count: 1)[0]
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                // Restored pending: the next event, not the restore, is what ends it.
                _ = try await Self.timerDeadlines(watcher, "question", id: Self.eventTimeoutID, count: 2)
                let cancelledBefore = watcher.effects(of: "question", "cancelled").filter { $0.effect == Self.eventTimeoutID }
                #expect(cancelledBefore.isEmpty, "\(cancelledBefore)")

                let probe = max(500, Int((deadline - Self.nowNs) / 1_000_000) + 1000)
                _ = try await cluster.send("question", #"{"probe":{"ms":\#(probe)}}"#)
                try await watcher.waitFor("the restored event timeout cancelled by the probe") {
                    $0.isEffect("question", "cancelled") && $0.effect == Self.eventTimeoutID
                }
                let done = try await cluster.waitForState("question", "probed", timeout: .seconds(30)) {
                    $0["seen"]?.arrayValue?.isEmpty == false
                }
                #expect(done["seen"] == json(#"["probed"]"#), "\(done)")
            }
        }
    }
}
