import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 26: credentials go to an auth effect on another worker; two-factor sign-in and
    /// lockout follow the seed's pattern; logout cancels what the session started. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct AuthenticationTests {
        static func topology(ioDelayMs: Int) -> TopologyFile {
            TopologyFile(
                name: "authentication", transport: .runtimeDirectory,
                workers: [.init(name: "edge"),
                          .init(name: "auth-io", arguments: ioDelayMs > 0 ? ["--io-delay-ms", "\(ioDelayMs)"] : [])],
                machines: [.init(name: "auth", type: "AuthFlow", worker: "edge", keyed: true),
                           .init(name: "loader", type: "DataLoader", worker: "edge")],
                io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")],
                routes: [.init(from: "auth", when: "signedIn", to: "loader", event: "load")]
            )
        }

        static let grace = json(#"{"email":"grace@example.com","id":"u-grace","name":"Grace Hopper"}"#)

        /// An event the machine does not handle in its state is answered with that state, and
        /// fsm-send says it was not handled (the reply's `unhandled` flag).
        @Test func fsmSendSaysWhenAnEventWasNotHandled() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                let ignored = try await cluster.fsmSend(["send", "auth/n", "logout"])
                #expect(ignored.status == 0, "\(ignored)")
                #expect(ignored.stdout.contains("unauthenticated"), "\(ignored)")
                #expect(ignored.stderr.contains("note: auth/n did not handle this event in its current state"), "\(ignored)")
                let handled = try await cluster.fsmSend(["send", "auth/n", "startLogin"])
                #expect(handled.status == 0, "\(handled)")
                #expect(!handled.stderr.contains("did not handle"), "\(handled)")
            }
        }

        @Test func twoFactorSignInAfterAWrongCode() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                let watcher = try await cluster.watch(["state:auth/", "effect:auth/", "output:auth/", "state:loader"])
                #expect(try await cluster.login("auth/g", email: "grace@example.com", password: "compiler").step == "authenticating")
                let challenged = try await cluster.waitForState("auth/g", "asked for a code") { $0.step == "requiresTwoFactor" }
                #expect(challenged["step"]?["requiresTwoFactor"]?["email"] == .string("grace@example.com"))

                // A wrong code counts as a failed attempt and asks again.
                #expect(try await cluster.submitCode("auth/g", "000000").step == "verifyingTwoFactor")
                let again = try await cluster.waitForState("auth/g", "asked again") { $0.step == "requiresTwoFactor" }
                #expect(again["failedAttempts"] == json("1"))

                #expect(try await cluster.submitCode("auth/g", "424242").step == "verifyingTwoFactor")
                let signedIn = try await cluster.waitForState("auth/g", "authenticated") { $0.step == "authenticated" }
                #expect(signedIn["step"]?["authenticated"]?["_0"] == Self.grace)
                #expect(signedIn["failedAttempts"] == json("0"))

                // Every check ran on the auth worker.
                let checks = watcher.events(where: { $0.topic == "effect:auth/g" && $0.phase == "completed" })
                #expect(checks.compactMap(\.effect) == [.string("authenticate"), .string("verify-two-factor"), .string("verify-two-factor")])
                let runners = Set(checks.compactMap(\.worker))
                #expect(runners == ["auth-io"])

                // The sign-in left the machine as an output, and the topology's route loaded data.
                let outputs = try await watcher.waitFor("the signedIn output") { $0.topic == "output:auth/g" }
                #expect(outputs.first?.payload["output"] == json(#"{"signedIn":{"_0":{"email":"grace@example.com","id":"u-grace","name":"Grace Hopper"}}}"#))
                try await watcher.waitFor("the routed load to finish") { $0.topic == "state:loader" && $0.state == loadedDemoItems }
            }
        }

        @Test func threeWrongPasswordsLockTheAccountForGood() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                try await cluster.login("auth/l", email: "ada@example.com", password: "wrong-1")
                for attempt in 1...2 {
                    let failed = try await cluster.waitForState("auth/l", "failed attempt \(attempt)") { $0.step == "authenticationFailed" }
                    #expect(failed["failedAttempts"] == json("\(attempt)"))
                    #expect(failed["step"]?["authenticationFailed"]?["canRetry"] == .bool(true))
                    let retried = try await cluster.send("auth/l", "retry")
                    #expect(retried["step"] == json(#"{"enteringCredentials":{"email":"ada@example.com","password":""}}"#))
                    try await cluster.send("auth/l", #"{"updatePassword":{"_0":"wrong-\#(attempt + 1)"}}"#)
                    #expect(try await cluster.send("auth/l", "login").step == "authenticating")
                }
                let locked = try await cluster.waitForState("auth/l", "locked") { $0.step == "locked" }
                #expect(locked["failedAttempts"] == json("3"))

                // Locked is terminal: even the right password is refused now.
                let refused = try await cluster.fsmSend(["send", "auth/l", "startLogin"])
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("machine-ended"), "\(refused)")

                // Other sessions are unaffected.
                try await cluster.login("auth/other", email: "ada@example.com", password: "analytical")
                try await cluster.waitForState("auth/other", "authenticated") { $0.step == "authenticated" }
            }
        }

        @Test func wrongCodesCountTowardTheLockoutToo() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                try await cluster.login("auth/c", email: "grace@example.com", password: "compiler")
                for attempt in 1...3 {
                    try await cluster.waitForState("auth/c", "asked for a code (\(attempt))") { $0.step == "requiresTwoFactor" }
                    try await cluster.submitCode("auth/c", "00000\(attempt)")
                    if attempt < 3 {
                        try await cluster.waitForState("auth/c", "failed attempt \(attempt)") { $0["failedAttempts"] == json("\(attempt)") }
                    }
                }
                try await cluster.waitForState("auth/c", "locked") { $0.step == "locked" }
            }
        }

        @Test func logoutCancelsTheSignInInFlight() async throws {
            try await withCluster(Self.topology(ioDelayMs: 1500)) { cluster in
                let watcher = try await cluster.watch(["state:auth/", "effect:auth/", "output:auth/"])
                #expect(try await cluster.login("auth/o", email: "ada@example.com", password: "analytical").step == "authenticating")
                try await watcher.waitFor("the sign-in to start") { $0.isEffect("auth/o", "started", id: "authenticate") }

                let out = try await cluster.send("auth/o", "logout")
                #expect(out.step == "unauthenticated")
                try await watcher.waitFor("the sign-in to be cancelled") { $0.isEffect("auth/o", "cancelled", id: "authenticate") }
                try await cluster.waitForLog("io request cancelled", "machine=auth/o")

                // A sign-in started after the logout takes the same 1.5 s on the same worker:
                // once it is through, the cancelled one's answer would have been too.
                try await cluster.login("auth/s", email: "ada@example.com", password: "analytical")
                try await watcher.waitFor("the later sign-in to succeed") { $0.topic == "state:auth/s" && $0.state?.step == "authenticated" }

                #expect(watcher.effects(of: "auth/o", "completed").isEmpty)
                #expect(watcher.outputs(of: "auth/o").isEmpty, "the cancelled sign-in signed the user in")
                #expect(try await cluster.state("auth/o").step == "unauthenticated")
                #expect(watcher.states(of: "auth/o").last?.step == "unauthenticated")
            }
        }

        @Test func logoutCancelsTheCodeCheckInFlight() async throws {
            try await withCluster(Self.topology(ioDelayMs: 1500)) { cluster in
                let watcher = try await cluster.watch(["state:auth/", "effect:auth/", "output:auth/"])
                try await cluster.login("auth/v", email: "grace@example.com", password: "compiler")
                try await cluster.waitForState("auth/v", "asked for a code") { $0.step == "requiresTwoFactor" }
                #expect(try await cluster.submitCode("auth/v", "424242").step == "verifyingTwoFactor")
                try await watcher.waitFor("the code check to start") { $0.isEffect("auth/v", "started", id: "verify-two-factor") }

                #expect(try await cluster.send("auth/v", "logout").step == "unauthenticated")
                try await watcher.waitFor("the code check to be cancelled") { $0.isEffect("auth/v", "cancelled", id: "verify-two-factor") }
                try await cluster.waitForLog("io request cancelled", "machine=auth/v")

                try await cluster.login("auth/s", email: "ada@example.com", password: "analytical")
                try await watcher.waitFor("the later sign-in to succeed") { $0.topic == "state:auth/s" && $0.state?.step == "authenticated" }
                #expect(watcher.effects(of: "auth/v", "completed", id: "verify-two-factor").isEmpty)
                #expect(watcher.outputs(of: "auth/v").isEmpty)
                #expect(try await cluster.state("auth/v").step == "unauthenticated")
            }
        }
    }
}
