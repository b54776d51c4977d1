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
                try await StateTimeoutRestartTests.killAndAwaitRestart(cluster)

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
    }
}
