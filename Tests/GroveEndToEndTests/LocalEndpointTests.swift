import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 34, attack 1: another local user (`nobody`) standing in for the coordinator of the
    /// default topology. Its endpoints are sockets in a directory of the launching user's alone;
    /// fsm-launch refuses what another user made there first, fsm-send refuses to talk to it,
    /// and nobody can bind where the coordinator binds. Each test here runs `nobody`'s squatter
    /// (``Squatter``), so it needs root and setpriv: CI runs the suite as root.
    ///
    /// Every launch gets a place of its own: `GROVE_RUNTIME_DIR` is `<test dir>/shared/grove`,
    /// where `shared` is writable by everyone with the sticky bit, as /tmp is (so nobody can
    /// make `grove` there first, as it could make /tmp/grove-0), and the default topology's
    /// data goes to `<test dir>/state` (`XDG_STATE_HOME`). The endpoints the squatter takes
    /// are the ones the operator's own tools report (what fsm-send says it tried, the ready
    /// line, the listing), never ones the test computes: the attacker binds what the victim uses.
    @Suite(.enabled(if: AnotherUser.isAvailable, Comment(rawValue: AnotherUser.why)), .timeLimit(.minutes(3)))
    struct LocalEndpointTests {
        struct Place {
            let directory: URL
            var shared: String { directory.path + "/shared" }
            var runtime: String { shared + "/grove" }
            var environment: [String: String] { ["GROVE_RUNTIME_DIR": runtime, "XDG_STATE_HOME": directory.path + "/state"] }

            init() throws {
                directory = try Cluster.makeDirectory()
                chmod(directory.path, 0o755)   // nobody reads its script here
                mkdir(shared, 0o777)
                chmod(shared, 0o1777)
            }

            func remove() { try? FileManager.default.removeItem(at: directory) }

            /// The default topology's fsm-launch, with this place's environment.
            func launch(_ arguments: [String] = []) async throws -> ChildProcess {
                try await ChildProcess(Products.launch, arguments, outputIn: directory, label: "fsm-launch", environment: environment)
            }

            func send(_ arguments: [String]) async throws -> CommandResult {
                try await runCommand(Products.send, arguments, in: directory, environment: environment)
            }
        }

        /// Waits until `launch` printed its ready line (returning the endpoint) or exited (nil).
        static func readyOrExited(_ launch: ChildProcess) async throws -> String? {
            try await eventually("fsm-launch to be ready or to exit", timeout: .seconds(30)) { () -> String?? in
                if let line = launch.stdout.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }) {
                    return .some(String(line.dropFirst("ready ".count)))
                }
                return launch.exitStatus == nil ? nil : .some(nil)
            }
        }

        /// The endpoint fsm-send uses when given none, as it says when nothing answers there.
        static func defaultEndpoint(_ place: Place) async throws -> String {
            let result = try await place.send(["list", "--timeout", "0.5"])
            guard let range = result.stderr.range(of: #"ipc://[^\s:;,]+"#, options: .regularExpression) else {
                throw HarnessError("fsm-send named no endpoint: \(result)")
            }
            return String(result.stderr[range])
        }

        static let password = #"{"updatePassword":{"_0":"hunter2"}}"#

        @Test func nobodyWhoGetsThereFirstStopsTheLaunchAndGetsNoPassword() async throws {
            let place = try Place()
            defer { place.remove() }
            let clients = try await Self.defaultEndpoint(place)
            let squatter = try await Squatter.start("router", clients, in: place.directory)
            defer { squatter.stop() }
            // The runtime directory did not exist: nobody made it (shared is like /tmp), and bound.
            #expect(squatter.stdout.contains("bound"), "\(squatter.stdout)")

            let launch = try await place.launch()
            defer { launch.stop() }
            let ready = try await Self.readyOrExited(launch)
            #expect(ready == nil, "fsm-launch started beside the squatter: \(ready ?? "")")
            #expect(launch.exitStatus == 1, "\(launch.stderr)")
            #expect(launch.stderr.contains("\(place.runtime) belongs to nobody (uid 65534), not to you, root (uid 0"), "\(launch.stderr)")
            #expect(launch.stderr.contains("or set GROVE_RUNTIME_DIR"), "\(launch.stderr)")

            // The operator's fsm-send, finding no coordinator of its own, refuses nobody's.
            let sent = try await place.send(["auth", Self.password, "--timeout", "2"])
            #expect(sent.status == 5, "\(sent)")
            #expect(sent.stderr.contains("untrusted-endpoint") && sent.stderr.contains("belongs to nobody (uid 65534)"), "\(sent)")
            #expect(!sent.stdout.contains(Squatter.forgedName), "a forged reply was accepted: \(sent)")
            #expect(!squatter.stdout.contains("hunter2"), "the password reached nobody: \(squatter.stdout)")
            #expect(!squatter.stdout.contains("connection"), "fsm-send connected to nobody: \(squatter.stdout)")
        }

        @Test func nobodyCannotBindTheSocketsOfARunningTopology() async throws {
            let place = try Place()
            defer { place.remove() }
            let launch = try await place.launch()
            defer { launch.stop() }
            let clients = try #require(try await Self.readyOrExited(launch), "fsm-launch did not start: \(launch.stderr)")
            #expect(clients == "ipc://\(place.runtime)/default/clients")
            // Both directories are the operator's alone.
            for path in [place.runtime, place.runtime + "/default"] {
                var status = stat()
                #expect(lstat(path, &status) == 0 && status.st_mode & 0o7777 == 0o700 && status.st_uid == 0, "\(path)")
            }
            let listing = try await place.send(["list"])
            let events = try #require(try JSONValue(parsing: Data(listing.stdout.utf8)).objectValue?["events"]?.stringValue, "\(listing)")

            let router = try await Squatter.start("router", clients, in: place.directory)
            defer { router.stop() }
            let publisher = try await Squatter.start("pub", events, in: place.directory)
            defer { publisher.stop() }
            #expect(router.stdout.contains("cannot bind") && router.stdout.contains("Permission denied"), "\(router.stdout)")
            #expect(publisher.stdout.contains("cannot bind") && publisher.stdout.contains("Permission denied"), "\(publisher.stdout)")

            // The operator's requests reach the operator's coordinator, with no flag.
            #expect(try await place.send(["auth", "startLogin"]).status == 0)
            let sent = try await place.send(["auth", Self.password])
            #expect(sent.status == 0 && !sent.stdout.contains(Squatter.forgedName), "\(sent)")
        }

        @Test func aSocketPlantedWhereOursWouldBeIsRefused() async throws {
            let place = try Place()
            defer { place.remove() }
            // The directories are the operator's (an earlier launch made them), but a socket of
            // nobody's sits where the clients socket goes (put there by root: nobody cannot).
            mkdir(place.runtime, 0o700)
            mkdir(place.runtime + "/default", 0o700)
            let squatter = try await Squatter.start("router", "ipc://\(place.shared)/planted/clients", in: place.directory)
            defer { squatter.stop() }
            try #require(squatter.stdout.contains("bound"), "\(squatter.stdout)")
            let clients = place.runtime + "/default/clients"
            try #require(rename(place.shared + "/planted/clients", clients) == 0)

            let launch = try await place.launch()
            defer { launch.stop() }
            #expect(try await Self.readyOrExited(launch) == nil, "fsm-launch started beside nobody's socket")
            #expect(launch.stderr.contains("\(clients) belongs to nobody (uid 65534)"), "\(launch.stderr)")

            let sent = try await place.send(["auth", Self.password, "--timeout", "2"])
            #expect(sent.status == 5, "\(sent)")
            #expect(sent.stderr.contains("\(clients) belongs to nobody (uid 65534)"), "\(sent)")
            #expect(!squatter.stdout.contains("hunter2") && !squatter.stdout.contains("connection"), "\(squatter.stdout)")
        }

        @Test func aSocketInADirectoryOthersCanWriteIsRefused() async throws {
            let place = try Place()
            defer { place.remove() }
            let clients = "ipc://\(place.shared)/clients"
            let squatter = try await Squatter.start("router", clients, in: place.directory)
            defer { squatter.stop() }
            let topology = place.directory.appendingPathComponent("topology.json")
            try Data("""
                { "name": "shared", "coordinator": { "clients": "\(clients)", "workers": "ipc://\(place.directory.path)/w",
                  "events": "ipc://\(place.directory.path)/e" },
                  "workers": [ { "name": "main" } ], "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "main" } ] }
                """.utf8).write(to: topology)

            let check = try await runCommand(Products.launch, ["--check", topology.path], in: place.directory)
            #expect(check.status == 2 && check.stderr.contains("\(place.shared) has mode 01777")
                    && check.stderr.contains("a directory of your own") && !check.stderr.contains("chmod go-w"), "\(check)")
            let launch = try await place.launch([topology.path])
            defer { launch.stop() }
            #expect(try await Self.readyOrExited(launch) == nil, "fsm-launch bound in a directory anyone may write")
            #expect(launch.stderr.contains("cannot bind the clients endpoint \(clients)") && launch.stderr.contains("a directory of your own"),
                    "\(launch.stderr)")

            let sent = try await place.send(["auth", Self.password, "--endpoint", clients, "--timeout", "2"])
            #expect(sent.status == 5, "\(sent)")
            #expect(!squatter.stdout.contains("hunter2") && !squatter.stdout.contains("connection"), "\(squatter.stdout)")
        }

        @Test func aWatcherConnectedAcrossARestartNeverFollowsASquatter() async throws {
            let place = try Place()
            defer { place.remove() }
            let first = try await place.launch()
            defer { first.stop() }
            _ = try #require(try await Self.readyOrExited(first), "fsm-launch did not start: \(first.stderr)")
            let watch = try await ChildProcess(Products.send, ["watch"], outputIn: place.directory, label: "watch",
                                               environment: place.environment)
            defer { watch.stop() }
            let events = try await eventually("the watcher to say what it watches") { () -> String? in
                watch.stderr.split(separator: "\n").first { $0.hasPrefix("watching ") }.map { String($0.dropFirst("watching ".count)) }
            }
            try await waitUntil("the watcher to see a state change", timeout: .seconds(20), interval: .milliseconds(200)) {
                _ = try await place.send(["counter/a", "increment"])
                return watch.stdout.contains("state:counter/a")
            }

            // The coordinator goes; nobody tries to take its place while the watcher reconnects.
            first.signal(SIGTERM)
            _ = await first.waitForExit(timeout: .seconds(20))
            let squatter = try await Squatter.start("pub", events, in: place.directory)
            defer { squatter.stop() }
            #expect(squatter.stdout.contains("cannot bind"), "\(squatter.stdout)")

            let second = try await place.launch()
            defer { second.stop() }
            _ = try #require(try await Self.readyOrExited(second), "fsm-launch did not start again: \(second.stderr)")
            try await waitUntil("the watcher to see the new coordinator's state changes", timeout: .seconds(20), interval: .milliseconds(200)) {
                _ = try await place.send(["counter/b", "increment"])
                return watch.stdout.contains("state:counter/b")
            }
            #expect(!watch.stdout.contains(Squatter.forgedName), "the watcher printed nobody's publications:\n\(watch.stdout)")
            #expect(!squatter.stdout.contains("connection"), "\(squatter.stdout)")
        }

        /// Before issue 34 the ZAP handler was all that kept another uid out of an ipc endpoint;
        /// it still is, behind the kernel's file permissions: here the socket is made writable
        /// for everyone, and nobody's connection is refused by the coordinator.
        @Test func theCoordinatorStillRefusesAnotherUidThatReachesItsSocket() async throws {
            let topology = TopologyFile(name: "mine", transport: .ipc, workers: [.init(name: "main")],
                                        machines: [.init(name: "counter", type: "Counter", worker: "main", keyed: true)])
            try await withCluster(topology) { cluster in
                #expect(try await cluster.fsmSend(["counter/a", "increment"]).status == 0)
                // nobody's fsm-send refuses a socket that is not its own.
                let asNobody = try await runCommand(AnotherUser.setpriv, AnotherUser.arguments + [
                    Products.send.path, "state", "counter/a", "--endpoint", cluster.clients, "--timeout", "1"], in: cluster.directory)
                #expect(asNobody.status == 5, "\(asNobody)")
                #expect(asNobody.stderr.contains("belongs to root (uid 0)"), "\(asNobody)")
                // A client of its own, to a socket the kernel lets it reach: refused by ZAP.
                chmod(cluster.directory.path, 0o755)
                chmod(cluster.directory.path + "/clients.ipc", 0o777)
                let peer = try await Squatter.start("dealer", cluster.clients, in: cluster.directory)
                _ = await peer.waitForExit(timeout: .seconds(10))
                #expect(peer.stdout.contains("refused") && !peer.stdout.contains("answered"), "\(peer.stdout)")
                try await cluster.waitForLog("refused", "uid 65534")
            }
        }
    }
}
