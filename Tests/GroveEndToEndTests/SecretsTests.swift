import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 20: a state's secrets stay in the worker that hosts it. AuthFlow's password, token
    /// and code are redacted in every reply and publication; the io request that carries the
    /// password goes only to the worker that runs it.
    @Suite(.timeLimit(.minutes(2)))
    struct SecretsTests {
        static let topology = TopologyFile(
            name: "secrets", transport: .ipc,
            workers: [.init(name: "edge"), .init(name: "auth-io")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "edge", keyed: true)],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
        )

        static let password = "compiler"

        @Test func passwordsAndCodesNeverLeaveTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch([])
                try await cluster.send("auth/g", "startLogin")
                try await cluster.send("auth/g", #"{"updateEmail":{"_0":"grace@example.com"}}"#)
                let typed = try await cluster.send("auth/g", #"{"updatePassword":{"_0":"\#(Self.password)"}}"#)
                #expect(typed["step"]?["enteringCredentials"]?["password"] == .string("<redacted>"), "\(typed)")
                #expect(typed["step"]?["enteringCredentials"]?["email"] == .string("grace@example.com"))
                let read = try await cluster.fsmSend(["state", "auth/g"])
                #expect(read.status == 0 && read.stdout.contains("<redacted>") && !read.stdout.contains(Self.password), "\(read)")
                // The password goes to auth-io in an io request, never to the events endpoint.
                try await cluster.send("auth/g", "login")
                try await cluster.waitForState("auth/g", "asked for a code") { $0.step == "requiresTwoFactor" }
                try await cluster.send("auth/g", #"{"updateTwoFactorCode":{"_0":"424242"}}"#)
                try await cluster.send("auth/g", "submitTwoFactor")
                try await cluster.waitForState("auth/g", "authenticated") { $0.step == "authenticated" }
                try await watcher.waitFor("the signed-in state") { $0.topic == "state:auth/g" && "\($0.payload)".contains("authenticated") }
                let published = watcher.process.stdout
                #expect(published.contains("enteringCredentials"), "the watcher saw the typing step")
                for secret in [Self.password, "424242"] {
                    #expect(!published.contains(secret), "a published event carries '\(secret)':\n\(published)")
                }
            }
        }

        /// Issue 34, attack 6: the default topology's `login` (LoginFlow, durable, here audited)
        /// printed the typed password to `fsm-send state login`. Now its replies, its
        /// publications, the coordinator's snapshot and its audit lines show `<redacted>`.
        @Test func theDefaultTopologysLoginKeepsThePasswordIn() async throws {
            let topology = TopologyFile(
                name: "login-secrets", transport: .ipc, workers: [.init(name: "main")],
                machines: [.init(name: "login", type: "LoginFlow", worker: "main", durability: "state", audit: true)],
                audit: #"{ "directory": "audit", "states": true }"#)
            try await withCluster(topology) { cluster in
                let watcher = try await cluster.watch(["state:login"])
                try await cluster.send("login", "startLogin")
                let typed = try await cluster.send("login", #"{"updatePassword":{"_0":"\#(Self.password)"}}"#)
                #expect(typed["enteringCredentials"]?["password"] == .string("<redacted>"), "\(typed)")
                let read = try await cluster.fsmSend(["state", "login"])
                #expect(read.status == 0 && read.stdout.contains("<redacted>") && !read.stdout.contains(Self.password), "\(read)")
                try await watcher.waitFor("the typing step") { $0.topic == "state:login" && "\($0.payload)".contains("<redacted>") }
                #expect(!watcher.process.stdout.contains(Self.password), "published:\n\(watcher.process.stdout)")
                let snapshot = try await WatcherGapTests.snapshot(of: "state:login", at: cluster.clients)
                #expect(snapshot != nil && !"\(snapshot!)".contains(Self.password) && "\(snapshot!)".contains("<redacted>"), "\(String(describing: snapshot))")
                let audit = try String(contentsOf: cluster.directory.appendingPathComponent("audit/main.jsonl"), encoding: .utf8)
                #expect(audit.contains("updatePassword") && !audit.contains(Self.password), "\(audit)")
            }
        }
    }
}
