import Foundation
import Testing

extension EndToEnd {
    /// Issue 34, attack 7 (directories): data and audit directories are the launching user's
    /// alone, and the files in them are not opened through links. fsm-launch refuses what is
    /// wrong before it starts anything, and says what to fix; a worker refuses a link planted
    /// while it ran when it opens the file again.
    @Suite(.timeLimit(.minutes(3)))
    struct DataDirectoryCheckTests {
        static let isRoot = geteuid() == 0

        /// A topology file in a new directory: one durable, audited Counter on `main`, its data
        /// in `<directory>/data` and its audit log in `<directory>/audit`.
        static func place() throws -> (directory: URL, topology: URL) {
            let directory = try Cluster.makeDirectory()
            let topology = directory.appendingPathComponent("topology.json")
            try Data("""
                { "name": "kept", "coordinator": { "clients": "ipc://\(directory.path)/c", "workers": "ipc://\(directory.path)/w",
                  "events": "ipc://\(directory.path)/e" },
                  "workers": [ { "name": "main" } ],
                  "machines": [ { "name": "counter", "type": "Counter", "worker": "main", "durability": "state", "audit": true } ],
                  "durability": { "directory": "data" }, "audit": { "directory": "audit" } }
                """.utf8).write(to: topology)
            return (directory, topology)
        }

        /// Launches `topology` and returns fsm-launch's stderr once it exited (after checking
        /// that it refused to start: status 1, never ready), and `--check`'s.
        static func refusal(_ topology: URL, in directory: URL) async throws -> (launch: String, check: String) {
            let check = try await runCommand(Products.launch, ["--check", topology.path], in: directory)
            #expect(check.status == 2, "--check passed: \(check)")
            let launch = try await ChildProcess(Products.launch, [topology.path], outputIn: directory, label: "fsm-launch")
            defer { launch.stop() }
            try await waitUntil("fsm-launch to be ready or exit", timeout: .seconds(30)) {
                launch.exitStatus != nil || launch.stdout.contains("ready ")
            }
            #expect(launch.exitStatus == 1 && !launch.stdout.contains("ready "), "fsm-launch started: \(launch.stdout)\n\(launch.stderr)")
            return (launch.stderr, check.stderr)
        }

        @Test(arguments: ["data", "audit"])
        func aDirectoryThatIsALinkIsRefused(_ role: String) async throws {
            let (directory, topology) = try Self.place()
            defer { try? FileManager.default.removeItem(at: directory) }
            mkdir(directory.path + "/real", 0o700)
            symlink(directory.path + "/real", directory.path + "/" + role)
            let (launch, check) = try await Self.refusal(topology, in: directory)
            for text in [launch, check] {
                #expect(text.contains("the \(role) directory: \(directory.path)/\(role) is a symbolic link"), "\(text)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/real") == [], "something was written through the link")
        }

        @Test(arguments: ["data", "audit"])
        func aDirectoryOpenToOthersIsRefused(_ role: String) async throws {
            let (directory, topology) = try Self.place()
            defer { try? FileManager.default.removeItem(at: directory) }
            mkdir(directory.path + "/" + role, 0o700)
            chmod(directory.path + "/" + role, 0o755)
            let (launch, _) = try await Self.refusal(topology, in: directory)
            #expect(launch.contains("\(directory.path)/\(role) has mode 0755") && launch.contains("chmod 700 \(directory.path)/\(role)"),
                    "\(launch)")
        }

        @Test(.enabled(if: isRoot, "needs root to give a directory to another user (CI runs the suite as root)"), arguments: ["data", "audit"])
        func anotherUsersDirectoryIsRefused(_ role: String) async throws {
            let (directory, topology) = try Self.place()
            defer { try? FileManager.default.removeItem(at: directory) }
            mkdir(directory.path + "/" + role, 0o700)
            chown(directory.path + "/" + role, 65534, 65534)
            let (launch, _) = try await Self.refusal(topology, in: directory)
            #expect(launch.contains("\(directory.path)/\(role) belongs to nobody (uid 65534)"), "\(launch)")
        }

        @Test(arguments: ["data/main.flight", "audit/main.jsonl", "data/main.sqlite"])
        func aFileThatIsALinkIsRefusedNotFollowed(_ file: String) async throws {
            let (directory, topology) = try Self.place()
            defer { try? FileManager.default.removeItem(at: directory) }
            for role in ["data", "audit"] { mkdir(directory.path + "/" + role, 0o700) }
            let victim = directory.path + "/victim"
            try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
            symlink(victim, directory.path + "/" + file)
            let (launch, _) = try await Self.refusal(topology, in: directory)
            #expect(launch.contains("\(directory.path)/\(file) is a symbolic link"), "\(launch)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
        }

        /// Planted while the topology runs: the restarted worker does not open the flight
        /// recorder through it (it runs on without one, and says so).
        @Test func aLinkPlantedWhileRunningIsRefusedWhenTheWorkerOpensItAgain() async throws {
            let topology = TopologyFile(name: "kept", transport: .ipc, workers: [.init(name: "main")],
                                        machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true, durability: "state")])
            try await withCluster(topology) { cluster in
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(1))
                let data = cluster.directory.appendingPathComponent("grove-data/kept").path
                let victim = cluster.directory.path + "/victim"
                try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
                try FileManager.default.removeItem(atPath: data + "/main.flight")
                symlink(victim, data + "/main.flight")
                let before = try await cluster.workerPID("main")
                kill(before, SIGKILL)
                try await cluster.waitForLog("\(data)/main.flight is a symbolic link", timeout: .seconds(30))
                #expect(try await cluster.send("counter/a", "increment")["count"] == .integer(2), "its store still serves")
                #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
            }
        }
    }
}
