import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import Testing
import ZeroMQ

/// The key files a topology's `security` names, as the coordinator (and `fsm-launch --check`)
/// reads them: every good file loads, and every file that cannot be used is refused with the
/// JSON path that names it, the file's path, and what to do.
@Suite("ClusterKeys", .timeLimit(.minutes(2)))
struct ClusterKeysTests {
    /// A folder with the key pairs `coordinator`, `edge`, `ops` and `board`, as fsm-keys writes them.
    struct Folder {
        let path: String
        let coordinator, edge, ops, board: CurveKeyPair

        init() throws {
            path = makePrivateDirectory("grove-keys")
            (coordinator, edge, ops, board) = (try .generate(), try .generate(), try .generate(), try .generate())
            for (name, keys) in [("coordinator", coordinator), ("edge", edge), ("ops", ops), ("board", board)] {
                try KeyFile.write(keys, base: path + "/" + name, name: name)
            }
        }

        func file(_ name: String) -> String { path + "/" + name }

        /// Replaces `name`'s text, keeping mode `mode`.
        func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws {
            unlink(file(name))
            #expect(FileManager.default.createFile(atPath: file(name), contents: Data(text.utf8)))
            chmod(file(name), mode)
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A topology naming the coordinator's secret, the group `edge`'s public key and two client
    /// keys, each relative to the topology's folder unless given absolute.
    static func topology(coordinator: String = "coordinator.key_secret", edge: String = "edge.key",
                         clients: [String] = ["ops.key", "board.key"]) throws -> Topology {
        let grants = clients.map { #"{ "key": "\#($0)", "roles": ["read"] }"# }.joined(separator: ", ")
        let json = """
            { "name": "t",
              "coordinator": { "clients": "tcp://127.0.0.1:5555", "workers": "tcp://127.0.0.1:5556", "events": "ipc:///run/t/events" },
              "workers": [ { "name": "main" }, { "name": "edge", "external": true, "key": "\(edge)" } ], "machines": [],
              "security": { "coordinatorKey": "\(coordinator)", "clients": [ \(grants) ] } }
            """
        return try Topology(json: Data(json.utf8), source: "t.json")
    }

    /// What loading `topology` from `folder` is refused with.
    static func refusal(_ topology: Topology, in folder: Folder) -> String? {
        do {
            _ = try ClusterKeys(topology: topology, relativeTo: URL(filePath: folder.path))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func everyKeyLoadsFromFilesRelativeToTheTopology() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let keys = try ClusterKeys(topology: try Self.topology(), relativeTo: URL(filePath: folder.path))
        #expect(keys.coordinator == folder.coordinator)
        #expect(keys.workers == ["edge": folder.edge.publicKey], "a group without a key has none")
        #expect(keys.clients == [folder.ops.publicKey, folder.board.publicKey], "in the order of security.clients")
        // An absolute path is taken as it is, whatever the folder.
        let absolute = try ClusterKeys(topology: try Self.topology(coordinator: folder.file("coordinator.key_secret"), edge: folder.file("edge.key"),
                                                                   clients: [folder.file("board.key")]),
                                       relativeTo: URL(filePath: "/nonexistent"))
        #expect(absolute.coordinator == folder.coordinator && absolute.workers == ["edge": folder.edge.publicKey]
                && absolute.clients == [folder.board.publicKey])
        // A client or a group may be given its secret file: only its public key is taken.
        let secrets = try ClusterKeys(topology: try Self.topology(edge: "edge.key_secret", clients: ["ops.key_secret"]),
                                      relativeTo: URL(filePath: folder.path))
        #expect(secrets.workers["edge"] == folder.edge.publicKey && secrets.clients == [folder.ops.publicKey])
    }

    @Test func aTopologyWithoutCURVEReadsNothing() throws {
        let json = """
            { "name": "t", "coordinator": { "clients": "ipc:///run/t/c", "workers": "ipc:///run/t/w", "events": "ipc:///run/t/e" },
              "workers": [ { "name": "main" } ], "machines": [] }
            """
        let keys = try ClusterKeys(topology: try Topology(json: Data(json.utf8), source: "t.json"), relativeTo: nil)
        #expect(keys.coordinator == nil && keys.workers.isEmpty && keys.clients.isEmpty)
    }

    @Test func aMissingFileIsNamedWithItsJSONPath() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let cases: [(Topology, String, String)] = [
            (try Self.topology(coordinator: "gone.key_secret"), "$.security.coordinatorKey: ", folder.file("gone.key_secret")),
            (try Self.topology(edge: "gone.key"), "$.workers[1].key: ", folder.file("gone.key")),
            (try Self.topology(clients: ["ops.key", "gone.key"]), "$.security.clients[1].key: ", folder.file("gone.key")),
        ]
        for (topology, path, file) in cases {
            let message = try #require(Self.refusal(topology, in: folder))
            #expect(message.hasPrefix(path + file + ": cannot read it"), "\(message)")
        }
    }

    @Test func aSecretFileOthersMayReadIsRefusedWithTheFixToRun() throws {
        let folder = try Folder()
        defer { folder.remove() }
        for mode: mode_t in [0o644, 0o640, 0o604, 0o660] {
            chmod(folder.file("coordinator.key_secret"), mode)
            let message = try #require(Self.refusal(try Self.topology(), in: folder))
            #expect(message == "$.security.coordinatorKey: \(folder.file("coordinator.key_secret")): holds a secret key but its mode is "
                    + String(mode, radix: 8) + "; run chmod 600 on it")
        }
        chmod(folder.file("coordinator.key_secret"), 0o400)
        #expect(Self.refusal(try Self.topology(), in: folder) == nil, "read-only for its owner is private enough")
    }

    /// A link is followed, as ssh follows one to a key: what is judged is the file it leads to.
    @Test func aLinkToASecretIsJudgedByTheFileItLeadsTo() throws {
        let folder = try Folder()
        defer { folder.remove() }
        symlink(folder.file("coordinator.key_secret"), folder.file("linked.key_secret"))
        let keys = try ClusterKeys(topology: try Self.topology(coordinator: "linked.key_secret"), relativeTo: URL(filePath: folder.path))
        #expect(keys.coordinator == folder.coordinator)
        chmod(folder.file("coordinator.key_secret"), 0o644)
        let message = try #require(Self.refusal(try Self.topology(coordinator: "linked.key_secret"), in: folder))
        #expect(message.contains(folder.file("linked.key_secret")) && message.contains("chmod 600"), "\(message)")
        chmod(folder.file("coordinator.key_secret"), 0o600)
        // A link that leads nowhere.
        symlink(folder.file("nothing"), folder.file("dangling.key"))
        let dangling = try #require(Self.refusal(try Self.topology(edge: "dangling.key"), in: folder))
        #expect(dangling.hasPrefix("$.workers[1].key: \(folder.file("dangling.key")): cannot read it"), "\(dangling)")
    }

    @Test func aFileOfTheWrongFormIsRefusedSayingWhatItLacks() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let secret = folder.coordinator.secretKey.z85, publicKey = folder.coordinator.publicKey.z85
        let cases: [(name: String, text: String, reason: String)] = [
            ("empty", "", "no secret-key line; is this a ZeroMQ certificate file (fsm-keys new writes them)?"),
            ("public", try String(contentsOfFile: folder.file("coordinator.key"), encoding: .utf8),
             "no secret-key line: this is a public key file; name the NAME.key_secret file instead"),
            ("bare", secret + "\n", "no secret-key line; is this"),
            ("short", "curve\n    secret-key = \"\(secret.dropLast())\"\n", "the secret-key is not 40 Z85 characters"),
            ("long", "curve\n    secret-key = \"\(secret)0\"\n", "the secret-key is not 40 Z85 characters"),
            ("notZ85", "curve\n    secret-key = \"\(String(repeating: "~", count: 40))\"\n", "the secret-key is not 40 Z85 characters"),
            ("binary", String(decoding: [0xff, 0x00, 0xfe, 0x3d, 0x0a], as: UTF8.self), "no secret-key line; is this"),
            ("mismatched", "curve\n    public-key = \"\(folder.edge.publicKey.z85)\"\n    secret-key = \"\(secret)\"\n",
             "its public-key does not belong to its secret-key; make a new pair with fsm-keys new"),
        ]
        for (name, text, reason) in cases {
            try folder.write(name + ".key_secret", text)
            let message = try #require(Self.refusal(try Self.topology(coordinator: name + ".key_secret"), in: folder), "\(name)")
            #expect(message.hasPrefix("$.security.coordinatorKey: \(folder.file(name + ".key_secret")): \(reason)"), "\(name): \(message)")
            #expect(!message.contains(secret), "\(name): a refusal printed the secret key: \(message)")
        }
        // Without a public-key line, the secret alone is a pair: the public key is derived.
        try folder.write("derived.key_secret", "curve\n    secret-key = \"\(secret)\"\n")
        let keys = try ClusterKeys(topology: try Self.topology(coordinator: "derived.key_secret"), relativeTo: URL(filePath: folder.path))
        #expect(keys.coordinator?.publicKey.z85 == publicKey)
    }

    @Test func aPublicKeyOfTheWrongFormIsRefusedSayingWhatItLacks() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let key = folder.ops.publicKey.z85
        let cases: [(name: String, text: String, reason: String)] = [
            ("empty", "", "no public-key line; is this a ZeroMQ certificate file (fsm-keys new writes them)?"),
            ("bare", key + "\n", "no public-key line"),
            ("short", "curve\n    public-key = \"\(key.dropLast())\"\n", "the public-key is not 40 Z85 characters"),
            ("notZ85", "curve\n    public-key = \"\(String(repeating: "~", count: 40))\"\n", "the public-key is not 40 Z85 characters"),
        ]
        for (name, text, reason) in cases {
            try folder.write(name + ".key", text, mode: 0o644)
            let client = try #require(Self.refusal(try Self.topology(clients: ["ops.key", name + ".key"]), in: folder), "\(name)")
            #expect(client.hasPrefix("$.security.clients[1].key: \(folder.file(name + ".key")): \(reason)"), "\(name): \(client)")
            let group = try #require(Self.refusal(try Self.topology(edge: name + ".key"), in: folder), "\(name)")
            #expect(group.hasPrefix("$.workers[1].key: \(folder.file(name + ".key")): \(reason)"), "\(name): \(group)")
        }
        // A directory where a file belongs.
        mkdir(folder.file("folder.key"), 0o700)
        let message = try #require(Self.refusal(try Self.topology(edge: "folder.key"), in: folder))
        #expect(message.hasPrefix("$.workers[1].key: \(folder.file("folder.key")): cannot read it"), "\(message)")
    }

    /// The coordinator's key is checked before the others, and the first file refused is the one named.
    @Test func theFirstFileRefusedIsTheOneNamed() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let message = try #require(Self.refusal(try Self.topology(coordinator: "gone.key_secret", edge: "gone.key"), in: folder))
        #expect(message.hasPrefix("$.security.coordinatorKey: "), "\(message)")
    }
}
