import Foundation
import Testing

extension EndToEnd {
    /// Issue 34, attack 7 (directories above): whoever may change a directory above the data
    /// or audit directory may swap it for one of theirs, or for a link to somewhere that passes
    /// (datadir1-3 in the review). fsm-launch refuses such a place before it starts anything; a
    /// worker refuses it when it opens its store or audit log again, naming the directory.
    @Suite(.timeLimit(.minutes(3)))
    struct DataDirectoryChainTests {
        static let isRoot = geteuid() == 0

        /// `topology.json` in `directory`: one durable, audited Counter on `main`, with the
        /// `durability` and `audit` sections given (none: `grove-data/kept`, `grove-audit/kept`).
        static func write(in directory: String, sections: String = "") throws -> URL {
            let topology = URL(fileURLWithPath: directory).appendingPathComponent("topology.json")
            let base = try Cluster.makeDirectory().path
            try Data("""
                { "name": "kept", "coordinator": { "clients": "ipc://\(base)/c", "workers": "ipc://\(base)/w",
                  "events": "ipc://\(base)/e" },
                  "workers": [ { "name": "main" } ],
                  "machines": [ { "name": "counter", "type": "Counter", "worker": "main", "durability": "state", "audit": true } ]
                  \(sections) }
                """.utf8).write(to: topology)
            return topology
        }

        /// Without root: `open` (mode 0777, no sticky bit) above the data or audit directory.
        @Test(arguments: ["data", "audit"])
        func aDirectoryAboveThatOthersMayWriteIsRefused(_ role: String) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            mkdir(directory.path + "/open", 0o700)
            chmod(directory.path + "/open", 0o777)
            let key = role == "data" ? "durability" : "audit"
            let topology = try Self.write(in: directory.path, sections: #", "\#(key)": { "directory": "open/\#(role)" }"#)
            let (launch, check) = try await DataDirectoryCheckTests.refusal(topology, in: directory)
            for text in [launch, check] {
                #expect(text.contains("the \(role) directory: \(directory.path)/open, on the way to \(directory.path)/open/\(role), "
                                      + "cannot be trusted: \(directory.path)/open has mode 0777"), "\(text)")
                #expect(text.contains("chmod go-w \(directory.path)/open"), "\(text)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.path + "/open/\(role)"), "created below a directory others may write")
        }

        /// datadir1: the topology file in a sticky directory anyone may write (as /tmp), where
        /// nobody made `grove-data` (or `grove-audit`) first, mode 0777.
        @Test(.enabled(if: isRoot, "needs root to give a directory to another user (CI runs the suite as root)"),
              arguments: ["grove-data", "grove-audit"])
        func anotherUsersDirectoryAboveIsRefused(_ name: String) async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let shared = directory.path + "/shared"
            mkdir(shared, 0o700)
            chmod(shared, 0o1777)
            mkdir(shared + "/" + name, 0o700)
            chmod(shared + "/" + name, 0o777)
            chown(shared + "/" + name, AnotherUser.uid, AnotherUser.uid)
            let topology = try Self.write(in: shared)
            let (launch, check) = try await DataDirectoryCheckTests.refusal(topology, in: directory)
            for text in [launch, check] {
                #expect(text.contains("\(shared)/\(name), on the way to \(shared)/\(name)/kept, cannot be trusted: "
                                      + "\(shared)/\(name) belongs to nobody (uid 65534)"), "\(text)")
                #expect(!text.contains("chmod"), "\(text)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: shared + "/" + name) == [])
        }

        /// datadir3, while the topology runs: `grove-data` (or `grove-audit`) becomes nobody's
        /// link to a directory of the operator's, mode 0700, that would pass (the runtime
        /// directory, say). The restarted worker refuses it, naming the link, and exits 78:
        /// fsm-launch stops everything rather than run on with its state silently elsewhere.
        @Test(.enabled(if: isRoot, "needs root to give a link to another user (CI runs the suite as root)"),
              arguments: ["grove-data", "grove-audit"])
        func anotherUsersLinkPlantedWhileRunningIsRefusedAtTheNextOpen(_ name: String) async throws {
            let topology = TopologyFile(name: "kept", transport: .ipc, workers: [.init(name: "main")],
                                        machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true,
                                                         durability: "state", audit: true)])
            try await withCluster(topology) { cluster in
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                let place = cluster.directory.path
                let elsewhere = place + "/elsewhere"
                mkdir(elsewhere, 0o700)
                mkdir(elsewhere + "/kept", 0o700)
                #expect(rename(place + "/" + name, place + "/" + name + ".x") == 0)
                symlink(elsewhere, place + "/" + name)
                lchown(place + "/" + name, AnotherUser.uid, AnotherUser.uid)
                kill(try await cluster.workerPID("main"), SIGKILL)
                try await cluster.waitForLog("\(place)/\(name), on the way to \(place)/\(name)/kept, cannot be trusted: "
                                             + "\(place)/\(name) belongs to nobody (uid 65534)", timeout: .seconds(30))
                try await waitUntil("fsm-launch to stop", timeout: .seconds(30)) { cluster.launch.exitStatus != nil }
                #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere + "/kept") == [], "written through the link")
            }
        }
    }
}
