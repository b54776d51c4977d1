import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Seed 001's effect-free LoginFlow (an Oak `Transducer`) and seed 000's UserForm with its
    /// async "validate" effect, hosted on a worker and driven by fsm-send. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct OakSeedTests {
        static let topology = TopologyFile(
            name: "oak-seeds", transport: .ipc,
            workers: [.init(name: "main")],
            machines: [.init(name: "login", type: "LoginFlow", worker: "main", keyed: true),
                       .init(name: "form", type: "UserForm", worker: "main", keyed: true)]
        )

        @Test func theSeedsLoginTransducerRunsOnAWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("login/a", "startLogin")
                        == json(#"{"enteringCredentials":{"email":"","password":""}}"#))
                try await cluster.send("login/a", #"{"updateEmail":{"_0":"ada@example.com"}}"#)
                #expect(try await cluster.send("login/a", "submitCredentials")
                        == json(#"{"authenticating":{"email":"ada@example.com","password":""}}"#))
                let failed = try await cluster.send("login/a", #"{"authenticationFailed":{"_0":{"message":"password required"}}}"#)
                #expect(failed == json(#"{"failed":{"_0":{"message":"password required"}}}"#))
                // The seed ignores pairs it does not list: the state stays, the send succeeds.
                #expect(try await cluster.send("login/a", "loginComplete") == failed)

                try await cluster.send("login/a", "startLogin")
                try await cluster.send("login/a", #"{"updatePassword":{"_0":"analytical"}}"#)
                try await cluster.send("login/a", "submitCredentials")
                let user = #"{"id":"u-ada","name":"Ada Lovelace","email":"ada@example.com"}"#
                #expect(try await cluster.send("login/a", #"{"authenticationSucceeded":{"_0":\#(user)}}"#)
                        == json(#"{"authenticated":{"_0":\#(user)}}"#))
                #expect(try await cluster.send("login/a", "loginComplete") == json(#"{"completed":{}}"#))
                // completed is terminal: later events are refused.
                let refused = try await cluster.fsmSend(["send", "login/a", "startLogin"])
                #expect(refused.status == 1, "\(refused)")
                #expect(refused.stderr.contains("machine-ended"), "\(refused)")
            }
        }

        @Test func theFormValidatesEachUpdateOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let typed = try await cluster.send("form/a", #"{"updateName":{"_0":"Ada"}}"#)
                #expect(typed["editing"]?["errors"] == json("[]"), "an update clears the errors until the verdict")
                let checked = try await cluster.waitForState("form/a", "validated") {
                    $0["editing"]?["errors"] == json(#"["invalidEmail","invalidPhone"]"#)
                }
                #expect(checked["editing"]?["_0"]?["name"] == json(#""Ada""#))
                #expect(try await cluster.send("form/a", "validate").caseName == "validating")
                try await cluster.waitForState("form/a", "back to editing") { $0.caseName == "editing" }
                #expect(try await cluster.send("form/a", "cancel") == json(#"{"cancelled":{}}"#))
            }
        }
    }
}
