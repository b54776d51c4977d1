import Foundation
import GroveCluster
import GroveWorker
import Testing

/// What fsm-launch prints for each instance of an external group: the command that starts it
/// on another host, and the files to copy there first (issue 37, item 5).
@Suite(.timeLimit(.minutes(2))) struct ExternalWorkerCommandTests {
    static let coordinatorKey = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"

    /// A CURVE topology: `edge` runs here, `gpu` is an external pool of two with its own key,
    /// `ledger` an external group whose machine is kept in PostgreSQL.
    static func topology(workers: String = "tcp://0.0.0.0:5556", postgres: Bool = true) throws -> Topology {
        let durability = postgres
            ? #", "durability": { "postgres": { "url": "postgres://grove@db-1:5432/grove", "passwordFile": "secrets/pg.password" } }"#
            : ""
        let json = """
            {
              "name": "spread",
              "coordinator": { "clients": "tcp://0.0.0.0:5555", "workers": "\(workers)", "events": "tcp://0.0.0.0:5557" },
              "workers": [ { "name": "edge" },
                           { "name": "gpu", "count": 2, "external": true, "key": "keys/gpu.key" },
                           { "name": "ledger", "external": true, "key": "/etc/grove/ledger.key" } ],
              "machines": [ { "name": "render", "type": "Counter", "worker": "gpu", "keyed": true },
                            { "name": "books", "type": "Counter", "worker": "ledger", "durability": "state" } ],
              "security": { "coordinatorKey": "keys/coordinator.key_secret" }\(durability)
            }
            """
        return try Topology(json: Data(json.utf8), source: "spread.json")
    }

    static let folder = URL(fileURLWithPath: "/srv/topologies")

    static func commands(_ topology: Topology, bound: String = "tcp://0.0.0.0:5556") -> [Topology.ExternalWorkerCommand] {
        topology.externalWorkerCommands(workersEndpoint: bound, hostName: "grove-1", coordinatorKey: coordinatorKey,
                                        topologyDirectory: folder)
    }

    @Test func everyInstanceOfEveryExternalGroupGetsItsOwnNameAndTheGroupsKey() throws {
        let commands = Self.commands(try Self.topology())
        #expect(commands.map(\.name) == ["gpu-1", "gpu-2", "ledger"])
        let gpu = try #require(commands.first)
        #expect(gpu.executable == "fsm-worker")
        #expect(gpu.arguments == ["--name", "gpu-1", "--coordinator", "tcp://grove-1:5556",
                                  "--key-file", "gpu.key_secret", "--coordinator-key", Self.coordinatorKey])
        #expect(gpu.files == [URL(fileURLWithPath: "/srv/topologies/keys/gpu.key_secret")])
        #expect(commands[1].arguments[1] == "gpu-2" && commands[1].files == gpu.files)
    }

    @Test func aWorkerWithADurableMachineInPostgreSQLIsToldWhereThePasswordIs() throws {
        let ledger = try #require(Self.commands(try Self.topology()).last)
        #expect(ledger.arguments.suffix(2) == ["--store-password-file", "pg.password"])
        #expect(ledger.files == [URL(fileURLWithPath: "/etc/grove/ledger.key_secret"),
                                 URL(fileURLWithPath: "/srv/topologies/secrets/pg.password")])
        // gpu keeps nothing: it needs no password, and is given none.
        #expect(!Self.commands(try Self.topology()).first!.arguments.contains("--store-password-file"))
        let sqlite = try #require(Self.commands(try Self.topology(postgres: false)).last)
        #expect(!sqlite.arguments.contains("--store-password-file") && sqlite.files.count == 1)
    }

    @Test func anAddressTheCoordinatorBoundIsKeptAWildcardBecomesTheHostName() throws {
        let topology = try Self.topology(workers: "tcp://10.77.0.1:*")
        let bound = Self.commands(topology, bound: "tcp://10.77.0.1:41234")
        #expect(bound.allSatisfy { $0.arguments[3] == "tcp://10.77.0.1:41234" })
        for wildcard in ["tcp://0.0.0.0:5556", "tcp://*:5556", "tcp://[::]:5556"] {
            #expect(Self.commands(topology, bound: wildcard).first?.arguments[3] == "tcp://grove-1:5556", "\(wildcard)")
        }
        #expect(ClientEndpoint.reachable("ipc:///run/grove/t/workers", hostName: "grove-1") == "ipc:///run/grove/t/workers")
    }

    @Test func withoutCurveTheCommandNamesNoKeys() throws {
        let json = """
            { "name": "plain", "coordinator": { "clients": "ipc:///run/t/c", "workers": "ipc:///run/t/w", "events": "ipc:///run/t/e" },
              "workers": [ { "name": "outside", "external": true, "executable": "shop-worker" } ], "machines": [] }
            """
        let topology = try Topology(json: Data(json.utf8), source: "plain.json")
        let commands = topology.externalWorkerCommands(workersEndpoint: "ipc:///run/t/w", hostName: "grove-1",
                                                       coordinatorKey: nil, topologyDirectory: nil)
        #expect(commands == [.init(name: "outside", executable: "shop-worker",
                                   arguments: ["--name", "outside", "--coordinator", "ipc:///run/t/w"], files: [])])
        #expect(commands[0].instructions == "waiting for external worker outside: start it with `shop-worker --name outside --coordinator ipc:///run/t/w`")
    }

    @Test func theLineIsOneAShellRunsAsIsAndTheWorkerReadsBack() throws {
        let gpu = try #require(Self.commands(try Self.topology()).first)
        // The Z85 key has characters a shell acts on: it is quoted, and nothing else is.
        #expect(gpu.line == "fsm-worker --name gpu-1 --coordinator tcp://grove-1:5556 --key-file gpu.key_secret --coordinator-key '\(Self.coordinatorKey)'")
        #expect(Topology.ExternalWorkerCommand.shellWord("it's") == #"'it'\''s'"#)
        let options = try Worker.Options(arguments: gpu.arguments)
        #expect(options.name == "gpu-1" && options.coordinator == "tcp://grove-1:5556")
        #expect(options.keyFile == "gpu.key_secret" && options.coordinatorKey == Self.coordinatorKey)
        let ledger = try #require(Self.commands(try Self.topology()).last)
        #expect(try Worker.Options(arguments: ledger.arguments).storePasswordFile == "pg.password")
    }

    /// One Z85 key in 85 starts with `-`: the printed command still works as written (the
    /// option takes its next word whatever it looks like). It failed a CI run when it did not.
    @Test func aCoordinatorKeyThatStartsWithADashIsReadAsTheKey() throws {
        let key = "-^#[8b=y7bK3[[y6udS>pqIfp>KzOe5enkH(eUn:"
        let command = try #require(try Self.topology().externalWorkerCommands(
            workersEndpoint: "tcp://0.0.0.0:5556", hostName: "grove-1", coordinatorKey: key, topologyDirectory: nil).first)
        #expect(command.line.hasSuffix("--coordinator-key '\(key)'"))
        #expect(try Worker.Options(arguments: command.arguments).coordinatorKey == key)
        #expect(try Worker.Options(arguments: ["--name", "w", "--coordinator", "ipc:///x", "--coordinator-key", "-x"]).coordinatorKey == "-x")
    }

    @Test func theInstructionsNameTheFilesToCopyAndWhereTheyAre() throws {
        let ledger = try #require(Self.commands(try Self.topology()).last)
        #expect(ledger.instructions.hasPrefix("waiting for external worker ledger: start it with `fsm-worker --name ledger "))
        #expect(ledger.instructions.contains("` in a directory holding ledger.key_secret and pg.password (copy /etc/grove/ledger.key_secret and /srv/topologies/secrets/pg.password there"))
    }

    /// A group with `direct` on (design 1.2): told to bind a direct endpoint of its own, over tcp
    /// a free port on its own host (which fsm-launch cannot know: the instructions say to fill it
    /// in), over ipc a socket of its own in the topology's runtime directory.
    @Test func anExternalGroupWithDirectRoutesIsToldToBindItsOwnEndpoint() throws {
        func topology(workers: String) throws -> Topology {
            try Topology(json: Data("""
                { "name": "spread", "coordinator": { "clients": "ipc:///run/t/c", "workers": "\(workers)", "events": "ipc:///run/t/e" },
                  "workers": [ { "name": "gpu", "count": 2, "external": true, "direct": true }, { "name": "edge", "external": true } ],
                  "machines": [ { "name": "render", "type": "Counter", "worker": "gpu", "keyed": true },
                                { "name": "plain", "type": "Counter", "worker": "edge" } ],
                  "security": { "insecure": true } }
                """.utf8), source: "spread.json")
        }
        let overTCP = try topology(workers: "tcp://0.0.0.0:5556").externalWorkerCommands(
            workersEndpoint: "tcp://0.0.0.0:5556", hostName: "grove-1", coordinatorKey: nil, topologyDirectory: Self.folder)
        #expect(overTCP.map(\.name) == ["gpu-1", "gpu-2", "edge"])
        #expect(overTCP[0].arguments == ["--name", "gpu-1", "--coordinator", "tcp://grove-1:5556", "--direct", "tcp://HOST:0"])
        #expect(overTCP[0].instructions.contains("HOST in --direct replaced by the address clients reach that host at"))
        #expect(!overTCP[2].arguments.contains("--direct"), "direct is off for edge")
        #expect(!overTCP[2].instructions.contains("HOST"))
        // The worker reads the printed line back as it was meant.
        let options = try Worker.Options(arguments: Array(overTCP[0].arguments))
        #expect(options.direct == "tcp://HOST:0")

        let overIPC = try topology(workers: "ipc:///run/t/w").externalWorkerCommands(
            workersEndpoint: "ipc:///run/t/w", hostName: "grove-1", coordinatorKey: nil, topologyDirectory: nil)
        let gpu1 = try #require(overIPC.first?.arguments.split(separator: "--direct").last?.first)
        let gpu2 = try #require(overIPC.dropFirst().first?.arguments.split(separator: "--direct").last?.first)
        #expect(gpu1.hasPrefix("ipc://") && gpu1.contains("/spread/direct/gpu-1."), "\(gpu1)")
        #expect(gpu2.contains("/spread/direct/gpu-2.") && gpu1 != gpu2)
    }
}
