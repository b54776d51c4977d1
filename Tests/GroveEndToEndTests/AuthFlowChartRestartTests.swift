import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 36, item 3 on a worker: `AuthFlowChart`, as the shipped `fsm-worker` registers it,
    /// durable, with real fsm-launch, fsm-worker and fsm-send over ipc. A sign-in stopped in the
    /// second factor's `enteringCode` when its worker is killed with SIGKILL comes back in that
    /// sub-state, and the levels above it still handle what it does not: typing the code
    /// (`twoFactor`), then `logout` from `awaitingCode` (`signingIn`, two levels up). The
    /// in-memory service forgets its second-factor tokens with the worker, so the restored
    /// sign-in's code is refused (one failed attempt, back to `awaitingCode`); a fresh sign-in
    /// on the new worker then completes. Every wait polls the state, bounded; no timing decides.
    @Suite(.timeLimit(.minutes(2)))
    struct AuthFlowChartRestartTests {
        static func topology(_ name: String, durability: String) -> TopologyFile {
            TopologyFile(
                name: name, transport: .ipc,
                workers: [.init(name: "w")],
                machines: [.init(name: "auth", type: "AuthFlowChart", worker: "w", durability: durability)]
            )
        }

        /// Signs Grace in up to the second factor (`awaitingCode`).
        static func reachTwoFactor(_ cluster: Cluster) async throws {
            let sent = try await cluster.login("auth", email: "grace@example.com", password: "compiler")
            #expect(sent.step == "authenticating", "\(sent)")
            try await cluster.waitForState("auth", "asked for the second factor", timeout: .seconds(30)) {
                $0.step == "requiresTwoFactor"
            }
        }

        @Test(arguments: ["state", "journal"])
        func aSignInKilledInTheSecondFactorComesBackInItsSubStateWithItsParentsHandlers(durability: String) async throws {
            try await withCluster(Self.topology("authchart-\(durability)", durability: durability)) { cluster in
                try await Self.reachTwoFactor(cluster)
                let typed = try await cluster.send("auth", #"{"updateTwoFactorCode":{"_0":"1111"}}"#)
                #expect(typed.step == "enteringTwoFactor", "\(typed)")
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let restored = try await cluster.state("auth")
                #expect(restored.step == "enteringTwoFactor", "restored in `enteringCode`: \(restored)")
                #expect(restored["failedAttempts"] == json("0"), "\(restored)")
                // `enteringCode` does not take a code typed again: its parent `twoFactor` does.
                let retyped = try await cluster.send("auth", #"{"updateTwoFactorCode":{"_0":"424242"}}"#)
                #expect(retyped.step == "enteringTwoFactor", "\(retyped)")
                // `verifying`'s enter sends the code; the new worker's service no longer knows
                // the token, so it is refused: a failed attempt, back to `awaitingCode`.
                _ = try await cluster.send("auth", "submitTwoFactor")
                let refused = try await cluster.waitForState("auth", "refused the old token", timeout: .seconds(30)) {
                    $0.step == "requiresTwoFactor"
                }
                #expect(refused["failedAttempts"] == json("1"), "\(refused)")
                // Neither `awaitingCode` nor `twoFactor` takes `logout`: `signingIn` does.
                let out = try await cluster.send("auth", "logout")
                #expect(out.step == "unauthenticated", "\(out)")

                try await Self.reachTwoFactor(cluster)
                let submitted = try await cluster.submitCode("auth", "424242")
                #expect(submitted.step == "verifyingTwoFactor", "\(submitted)")
                let signedIn = try await cluster.waitForState("auth", "signed in", timeout: .seconds(30)) {
                    $0.step == "authenticated"
                }
                #expect(signedIn["failedAttempts"] == json("0"), "\(signedIn)")
            }
        }
        /// Issue 36, postpone on a worker: `AuthFlowChart` keeps the code's events while a
        /// password or a code is checked. The service runs on its own worker, `auth-io`, and takes
        /// 4 s to answer (`--io-delay-ms`): the window in which the early events arrive; each
        /// reply shows they were kept, not handled (the step has not moved). First the code,
        /// typed and submitted before the prompt (a wrong one), is entered and sent by the prompt
        /// itself, with no further send. Then, while it is checked, the right code is typed and
        /// submitted (postponed) and the chart's worker is killed with SIGKILL. The restarted
        /// worker brings the sign-in back holding them; the verification the kill interrupted
        /// comes back as "service unavailable" (`VerifyTwoFactor` is not sent twice), which does
        /// not count and moves to `enteringCode`; that change of step delivers the postponed code
        /// and its submit again, so the right code is verified and the user signed in, with no
        /// failed attempt: the wrong code was never judged. Every wait polls the state, bounded.
        @Test(arguments: ["state", "journal"])
        func codesSentEarlyArePostponedAcrossAKilledWorkerAndHandledWhenTheStepChanges(durability: String) async throws {
            let topology = TopologyFile(
                name: "authchart-postpone-\(durability)", transport: .ipc,
                workers: [.init(name: "w"), .init(name: "auth-io", arguments: ["--io-delay-ms", "4000"])],
                machines: [.init(name: "auth", type: "AuthFlowChart", worker: "w", durability: durability)],
                io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
            )
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["effect:auth"])
                let sent = try await cluster.login("auth", email: "grace@example.com", password: "compiler")
                #expect(sent.step == "authenticating", "\(sent)")
                let early = try await cluster.submitCode("auth", "1111")
                #expect(early.step == "authenticating", "kept for the prompt: \(early)")
                // The prompt delivers them again: entered, submitted, and sent to the service.
                try await cluster.waitForState("auth", "verifying the early code", timeout: .seconds(30)) {
                    $0.step == "verifyingTwoFactor"
                }
                let next = try await cluster.submitCode("auth", "424242")
                #expect(next.step == "verifyingTwoFactor", "kept while the first code is checked: \(next)")
                let judgedBeforeTheKill = watcher.effects(of: "auth", "completed", id: "verify-two-factor")
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let signedIn = try await cluster.waitForState("auth", "signed in by the postponed code", timeout: .seconds(30)) {
                    $0.step == "authenticated"
                }
                #expect(signedIn["failedAttempts"] == json("0"), "\(signedIn)")
                #expect(judgedBeforeTheKill.isEmpty, "the kill came before the first code's answer: \(judgedBeforeTheKill)")
                try await watcher.waitFor("the right code's verification completed") {
                    $0.isEffect("auth", "completed", id: "verify-two-factor")
                }
                // The first code's request was lost with the worker, never answered; the
                // postponed code's is the one the service judged.
                let phases = watcher.effects(of: "auth", id: "verify-two-factor").compactMap(\.phase)
                #expect(phases.filter { $0 == "completed" }.count == 1, "\(phases)")
                #expect(phases.firstIndex(of: "lost").map { $0 < phases.firstIndex(of: "completed")! } == true, "\(phases)")
            }
        }

        /// The id of the second factor's level timeout, as the worker publishes it.
        static let codeDeadlineID = json(#"{"reserved":"state-timeout/signingIn.twoFactor"}"#)

        /// Issue 36 on a worker: the level timeout of `twoFactor` (armed on entering it, kept
        /// across its steps) is a durable timer, so a worker killed with SIGKILL before it is due
        /// comes back with it at its original deadline, and when it fires after the restart it
        /// logs the half-finished sign-in out. `QuickAuthFlowChart` (`fsm-worker
        /// --with-test-machines`) is `AuthFlowChart`'s statechart with an 8 s code deadline
        /// instead of five minutes. The deadline is read from the worker's own `effect:auth`
        /// events: the same when it is armed and when the restarted worker, watched, announces
        /// the timers it restored as started. No sleep decides: every wait polls, bounded.
        @Test(arguments: ["state", "journal"])
        func theSecondFactorsDeadlineKeptAcrossAKilledWorkerLogsOutAfterTheRestart(durability: String) async throws {
            let topology = TopologyFile(
                name: "authchart-deadline-\(durability)", transport: .ipc,
                workers: [.init(name: "w", arguments: ["--with-test-machines"])],
                machines: [.init(name: "auth", type: "QuickAuthFlowChart", worker: "w", durability: durability)]
            )
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["effect:auth"])
                try await Self.reachTwoFactor(cluster)
                let deadline = try await StateTimeoutRestartTests.timerDeadlines(watcher, "auth", id: Self.codeDeadlineID, count: 1)[0]
                // A move inside `twoFactor` keeps its level timeout.
                let typed = try await cluster.send("auth", #"{"updateTwoFactorCode":{"_0":"1111"}}"#)
                #expect(typed.step == "enteringTwoFactor", "\(typed)")
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                let killedEarly = StateTimeoutRestartTests.nowNs < deadline
                #expect(killedEarly, "the worker was killed before the deadline")

                let deadlines = try await StateTimeoutRestartTests.timerDeadlines(watcher, "auth", id: Self.codeDeadlineID, count: 2)
                #expect(deadlines[1] == deadline, "restored at its original deadline")
                let restored = try await cluster.state("auth")
                if StateTimeoutRestartTests.nowNs < deadline {
                    #expect(restored.step == "enteringTwoFactor", "before its deadline it has not fired: \(restored)")
                }
                let out = try await cluster.waitForState("auth", "logged out by the code deadline", timeout: .seconds(30)) {
                    $0.step == "unauthenticated"
                }
                #expect(StateTimeoutRestartTests.nowNs >= deadline, "never before its deadline: \(out)")
                try await watcher.waitFor("the level timeout fired") {
                    $0.isEffect("auth", "fired") && $0.effect == Self.codeDeadlineID
                }
                let cancelled = watcher.effects(of: "auth", "cancelled").filter { $0.effect == Self.codeDeadlineID }
                #expect(cancelled.isEmpty, "moving between its steps and the restart kept it: \(cancelled)")
            }
        }
    }
}
