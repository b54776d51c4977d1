@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Foundation
import Grove
import GroveExamples
import GroveWire
import Testing

/// Issue 34, item 5: `Redacting` holds through every wrapper a worker hosts (a reducer
/// registered as a value, an awaiting StateMachinePackage program, an `IOMachine`) in its
/// replies and audit lines, and in the dead letters it lists; the machine and the store keep
/// the secret. A real worker runtime and coordinator in one process.
@Suite(.timeLimit(.minutes(2)))
struct RedactionWorkerTests {
    static let topology = Topology(
        name: "secrets",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "vault", type: "Vault", worker: "w", durability: .state, audit: true),
                   .init(name: "awaiting", type: "AwaitingVault", worker: "w", audit: true),
                   .init(name: "signin", type: "AuthenticateFeature", worker: "w", audit: true),
                   .init(name: "login", type: "LoginFlow", worker: "w", durability: .state)],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    static let secret = "correct horse"

    /// A state with a secret, and the action that sets it.
    struct Vault: Codable, Sendable, Equatable, Redacting {
        var owner = ""
        var secret = ""
        var redacted: Self { Vault(owner: owner, secret: Redaction.hiding(secret)) }
    }

    enum VaultAction: Codable, Sendable, Equatable, Redacting {
        case store(owner: String, secret: String)
        var redacted: Self {
            switch self {
            case .store(let owner, let secret): .store(owner: owner, secret: Redaction.hiding(secret))
            }
        }
    }

    /// The same, as a StateMachinePackage program whose transition awaits.
    enum AwaitingVault: AwaitingStateMachineProgram {
        static var stateMachine: StateMachine<Vault, VaultAction> {
            StateMachine(initial: Vault()) { _, action async in
                switch action {
                case .store(let owner, let secret): .newState(Vault(owner: owner, secret: secret))
                }
            }
        }
    }

    static func worker(_ store: MemoryMachineStore) throws -> InMemoryWorker {
        var configuration = WorkerConfiguration()
        configuration.register("Vault", initialState: Vault()) { (_: Vault, action: VaultAction) -> (Vault, TeaEffect<VaultAction, Void>) in
            switch action {
            case .store(let owner, let secret): (Vault(owner: owner, secret: secret), .none)
            }
        }
        configuration.register(AwaitingStateMachine<AwaitingVault>.self, as: "AwaitingVault")
        configuration.register(IOMachine<AuthenticateFeature>.self, as: "AuthenticateFeature", env: AuthenticateFeature(api: .demo))
        configuration.register(OakTransducer<LoginFlow>.self, as: "LoginFlow")
        return try InMemoryWorker(name: "w", configuration: configuration, openStore: { store })
    }

    static let store = #"{"store":{"owner":"ada","secret":"\#(secret)"}}"#

    @Test func repliesAuditLinesAndDeadLettersOfEveryWrapperAreRedacted() async throws {
        let directory = AuditLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        // A dead letter of LoginFlow holding a typed password, as a quarantine would leave it.
        var letters = StoreCommit()
        letters.deadLetters.append(DeadLetter(address: "login", type: "LoginFlow", event: Array(#"{"updatePassword":{"_0":"\#(Self.secret)"}}"#.utf8),
                                              binary: false, error: "the worker died while running it, 2 times", crashes: 2, time: 1_700_000_000_000))
        try store.commit(letters)
        let worker = try Self.worker(store)
        defer { worker.stop() }
        worker.onLoop { $0.turn.audit.use(directory: directory) }
        try await PoisonEventTests.started(worker, in: cluster)

        // A reducer registered as a value: the reply is redacted, the store keeps the secret.
        let vault = try await PoisonEventTests.send(Self.store, to: "vault", cluster, worker, correlation: 1)
        #expect(vault.text == #"{"owner":"ada","secret":"<redacted>"}"#, "\(vault.text)")
        // An awaiting program: its hosted state, and the event in transition, redacted.
        let awaiting = try await PoisonEventTests.send(Self.store, to: "awaiting", cluster, worker, correlation: 2)
        #expect(awaiting.header.kind == .state && !awaiting.text.contains(Self.secret), "\(awaiting.text)")
        #expect(awaiting.text.contains("<redacted>"), "\(awaiting.text)")
        var got = awaiting
        for correlation in 3...200 as ClosedRange<UInt64> where got.text.contains("inTransition") {
            got = try await PoisonEventTests.request(WireMessage(Header(.get, correlation: correlation), address: "awaiting"),
                                                     through: cluster, to: worker)
        }
        #expect(got.text.contains(#""secret":"<redacted>""#) && !got.text.contains(Self.secret), "\(got.text)")
        // An IOMachine: its audit line's event (an input holding a password) redacted.
        let signin = #"{"input":{"_0":{"signIn":{"username":"ada@example.com","password":"\#(Self.secret)"}}}}"#
        _ = try await PoisonEventTests.send(signin, to: "signin", cluster, worker, correlation: 300)
        // LoginFlow (the default topology's `login`): its state redacted.
        _ = try await PoisonEventTests.send(#""startLogin""#, to: "login", cluster, worker, correlation: 301)
        let typed = try await PoisonEventTests.send(#"{"updatePassword":{"_0":"\#(Self.secret)"}}"#, to: "login", cluster, worker, correlation: 302)
        #expect(typed.text.contains("<redacted>") && !typed.text.contains(Self.secret), "\(typed.text)")

        let lines = try String(contentsOfFile: "\(directory)/w.jsonl", encoding: .utf8)
        #expect(lines.contains(#""address":"vault""#) && lines.contains(#""address":"awaiting""#) && lines.contains(#""address":"signin""#),
                "\(lines)")
        #expect(!lines.contains(Self.secret), "an audit line carries the secret:\n\(lines)")
        #expect(lines.contains("<redacted>"))

        // The dead letters an admin lists: the event redacted; a retry still delivers the real one.
        let listed = try await PoisonEventTests.request(try PoisonEventTests.deadLetters(.init(.list), correlation: 400),
                                                        through: cluster, to: worker)
        let list = try WireJSON.decode(DeadLetterList.self, from: listed.payload)
        #expect(list.deadLetters.count == 1)
        let shown = String(decoding: listed.payload, as: UTF8.self)
        #expect(shown.contains("<redacted>"), "\(shown)")
        #expect(!shown.contains(Self.secret), "\(shown)")
        let retried = try await PoisonEventTests.request(try PoisonEventTests.deadLetters(.init(.retry, id: 1), correlation: 401),
                                                         through: cluster, to: worker)
        #expect(retried.header.kind == .state && retried.text.contains("<redacted>"), "\(retried.text)")
        let kept = try #require(try store.records().first { $0.address == "login" })
        let record = try DurableRecord.decode(kept.snapshot, as: OakTransducer<LoginFlow>.self)
        #expect(record.state == .enteringCredentials(email: "", password: Self.secret), "the machine keeps the real password")
    }

    /// Wrappers redact what they wrap, and cost nothing when it holds no secret.
    @Test func wrappersRedactWhatTheyWrapAndOnlyThat() {
        typealias Awaiting = AwaitingState<Vault, VaultAction>
        let state = Awaiting(Vault(owner: "ada", secret: "s"), inTransition: .store(owner: "b", secret: "t"),
                             waiting: [.store(owner: "c", secret: "u")], started: 3)
        #expect(Redaction.redact(state) == Awaiting(Vault(owner: "ada", secret: "<redacted>"),
                                                    inTransition: .store(owner: "b", secret: "<redacted>"),
                                                    waiting: [.store(owner: "c", secret: "<redacted>")], started: 3))
        #expect(Redaction.applies(to: Awaiting.self))
        #expect(!Redaction.applies(to: AwaitingState<Int, String>.self), "a wrapper of types without secrets redacts nothing")
        #expect(!Redaction.applies(to: IOMachine<RetryingFeature>.Event.self))
        #expect(Redaction.applies(to: IOMachine<AuthenticateFeature>.Event.self))
        let input = IOMachine<AuthenticateFeature>.Event.input(.signIn(username: "ada", password: "pw"))
        guard case .input(.signIn(let username, let password)) = Redaction.redact(input) else {
            Issue.record("the input keeps its case")
            return
        }
        #expect(username == "ada" && password == "<redacted>")
        guard case .event(.store(_, let hidden)) = Redaction.redact(AwaitingStep<Vault, VaultAction>.event(.store(owner: "a", secret: "s"))) else {
            Issue.record("the step keeps its case")
            return
        }
        #expect(hidden == "<redacted>")
        #expect(Redaction.applies(to: TeaStoreMachine<Vault, VaultAction>.State.self))
        #expect(!Redaction.applies(to: TeaStoreMachine<Int, VaultAction>.State.self))
        #expect(Redaction.hiding("") == "" && Redaction.hiding("x") == "<redacted>")
    }
}
