import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 22: an event sent with `fsm-send` to a machine on a worker changes its state, and
    /// the reply is the state that event committed. Also the CLI's documented exit codes, and
    /// `fsm-launch --check`. Over tcp.
    @Suite(.timeLimit(.minutes(2)))
    struct SendAndReplyTests {
        static let topology = TopologyFile(
            name: "send-and-reply", transport: .tcp,
            workers: [.init(name: "edge"), .init(name: "auth-io")],
            machines: [.init(name: "counter", type: "Counter", worker: "edge", keyed: true),
                       .init(name: "auth", type: "AuthFlow", worker: "edge")],
            io: [("Authenticate", "auth-io"), ("VerifyTwoFactor", "auth-io")]
        )

        @Test func theReplyIsTheCommittedStateAndTheWorkerKeepsIt() async throws {
            try await withCluster(Self.topology) { cluster in
                // Every endpoint was bound to a port the system picked (`tcp://127.0.0.1:*`), and
                // is reported with that port: by the ready line and by the listing.
                let listing = try await cluster.list()
                for endpoint in [cluster.clients, listing.events, listing.workersEndpoint ?? ""] {
                    #expect(endpoint.hasPrefix("tcp://127.0.0.1:") && (Int(endpoint.split(separator: ":").last ?? "") ?? 0) > 0,
                            "\(endpoint)")
                }
                let watcher = try await cluster.watch(["state:counter/"])
                #expect(try await cluster.send("counter/a", "increment") == json(#"{"count":1}"#))
                #expect(try await cluster.send("counter/a", #"{"add":{"_0":41}}"#) == json(#"{"count":42}"#))
                // Keyed instances are separate machines.
                #expect(try await cluster.send("counter/b", "increment") == json(#"{"count":1}"#))
                // The state lives on the worker: a read returns what the events committed.
                #expect(try await cluster.state("counter/a") == json(#"{"count":42}"#))
                #expect(try await cluster.send("counter/a", "reset") == json(#"{"count":0}"#))

                // The worker published each commit (after the initial state, when the instance
                // was created), from the worker hosting the machine.
                let zero = json(#"{"count":0}"#)
                let commits = try await eventually("counter/a's three commits on the watch stream") { () -> [JSONValue]? in
                    let states = watcher.states(of: "counter/a").drop { $0 == zero }
                    return states.count >= 3 ? Array(states) : nil
                }
                #expect(commits == [json(#"{"count":1}"#), json(#"{"count":42}"#), zero])
                let publishers = Set(watcher.events(where: { $0.topic == "state:counter/a" }).compactMap(\.worker))
                #expect(publishers == ["edge"])

                // A richer machine: the reply carries the state of the example's own Codable form.
                let entering = try await cluster.send("auth", "startLogin")
                #expect(entering["step"] == json(#"{"enteringCredentials":{"email":"","password":""}}"#))
                let typed = try await cluster.send("auth", #"{"updateEmail":{"_0":"ada@example.com"}}"#)
                #expect(typed["step"] == json(#"{"enteringCredentials":{"email":"ada@example.com","password":""}}"#))
                #expect(typed["failedAttempts"] == json("0"))
            }
        }

        @Test func badInputExitsWithTwoAndNamesTheProblem() async throws {
            try await withCluster(Self.topology) { cluster in
                try await cluster.send("counter/a", #"{"add":{"_0":7}}"#)

                let unknownMachine = try await cluster.fsmSend(["send", "nowhere", "increment"])
                #expect(unknownMachine.status == 2, "\(unknownMachine)")
                #expect(unknownMachine.stderr.contains("unknown-machine"), "\(unknownMachine)")
                #expect(unknownMachine.stdout.isEmpty)

                let wrongType = try await cluster.fsmSend(["send", "auth", #"{"updateEmail":{"_0":5}}"#])
                #expect(wrongType.status == 2, "\(wrongType)")
                #expect(wrongType.stderr.contains("$.updateEmail._0"), "\(wrongType)")

                let unknownCase = try await cluster.fsmSend(["send", "counter/a", "explode"])
                #expect(unknownCase.status == 2, "\(unknownCase)")
                #expect(unknownCase.stderr.contains("undecodable-event"), "\(unknownCase)")

                let malformed = try await cluster.fsmSend(["send", "counter/a", #"{"add":"#])
                #expect(malformed.status == 2, "\(malformed)")
                #expect(malformed.stderr.contains("malformed-json"), "\(malformed)")
                #expect(malformed.stderr.contains("at column 8 ($.add), unexpected end of the event"), "\(malformed)")
                // A value typed into a malformed event (a password, say) is not echoed back.
                let secret = try await cluster.fsmSend(["send", "counter/a", #"{"add":{"_0":"hunter2"}"#])
                #expect(secret.status == 2 && !secret.stderr.contains("hunter2"), "\(secret)")
                // An address with a newline would write a line of its own into the logs (issue 34).
                let forged = try await cluster.fsmSend(["send", "counter/a\ncritical grove: FORGED", "increment"])
                #expect(forged.status == 2 && forged.stderr.contains("control character U+000A at byte 9"), "\(forged)")
                #expect(!cluster.log.contains("FORGED"), "the coordinator's log holds no line of the client's")

                // Strict JSON: a trailing comma is refused here, with where it is.
                let trailingComma = try await cluster.fsmSend(["send", "counter/a", #"{"add":{"_0":1,}}"#])
                #expect(trailingComma.status == 2, "\(trailingComma)")
                #expect(trailingComma.stderr.contains("at column 15 ($.add), trailing comma before '}'"), "\(trailingComma)")

                // A key given twice is refused too (JSON would keep the last), with where.
                let twice = try await cluster.fsmSend(["send", "counter/a", #"{"add":{"_0":1,"_0":2}}"#])
                #expect(twice.status == 2, "\(twice)")
                #expect(twice.stderr.contains("gives the key $.add._0 twice (again at column 16)"), "\(twice)")

                let unkeyed = try await cluster.fsmSend(["send", "counter", "increment"])
                #expect(unkeyed.status == 2, "\(unkeyed)")
                #expect(unkeyed.stderr.contains("counter/<key>"), "\(unkeyed)")

                // None of that reached the machine.
                #expect(try await cluster.state("counter/a") == json(#"{"count":7}"#))
            }
        }

        @Test func otherFailuresExitWithOneAndAnAbsentCoordinatorWithThree() async throws {
            try await withCluster(Self.topology) { cluster in
                try await cluster.send("counter/s", "increment")
                let stopped = try await cluster.json(["stop", "counter/s"])
                #expect(stopped == json(#"{"count":1}"#))
                let afterStop = try await cluster.fsmSend(["send", "counter/s", "increment"])
                #expect(afterStop.status == 1, "\(afterStop)")
                #expect(afterStop.stderr.contains("machine-ended"), "\(afterStop)")

                let nobody = try UnlistenedPort()
                let unreachable = try await runCommand(
                    Products.send, ["send", "counter/a", "increment", "--endpoint", "tcp://127.0.0.1:\(nobody.port)", "--timeout", "0.5"],
                    in: cluster.directory)
                withExtendedLifetime(nobody) {}
                #expect(unreachable.status == 3, "\(unreachable)")
                #expect(!unreachable.stderr.isEmpty)
            }
        }

        /// SIGTERM to fsm-launch stops it and its workers. fsm-launch SIGKILLs a worker still
        /// running 2 s after its SIGTERM, so the workers' own SIGTERM handling is checked
        /// first, on one worker directly: one that ignored SIGTERM would never exit.
        @Test func sigtermStopsTheLauncherAndEveryWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let listing = try await cluster.list()
                let pids = listing.workers.compactMap(\.pid)
                #expect(pids.count == 2)
                #expect(pids.allSatisfy(ProcessTable.isAlive))
                let first = try #require(ProcessTable.children(of: cluster.launch.pid).first { $0.pid == pids.first })
                kill(first.pid, SIGTERM)
                try await waitUntil("worker \(first.pid) to exit on SIGTERM") { !ProcessTable.isAlive(first) }

                let workers = ProcessTable.children(of: cluster.launch.pid)  // a restarted worker too
                cluster.launch.signal(SIGTERM)
                let status = await cluster.launch.waitForExit(timeout: .seconds(15))
                #expect(status == 0)
                try await waitUntil("the workers to exit with fsm-launch") { !workers.contains(where: ProcessTable.isAlive) }
            }
        }

        @Test func checkValidatesWithoutStartingAndNamesEveryPath() async throws {
            let directory = try Cluster.makeDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let good = try Self.topology.write(in: directory)
            let ok = try await runCommand(Products.launch, ["--check", good.path], in: directory)
            #expect(ok.status == 0, "\(ok)")
            #expect(ok.stdout.hasPrefix("ok:"), "\(ok)")

            let bad = directory.appendingPathComponent("bad.json")
            try Data(#"""
                {
                  "name": "bad",
                  "workers": [ { "name": "edge", "count": 0 } ],
                  "machines": [
                    { "name": "auth", "type": "AuthFlow", "worker": "nowhere" },
                    { "name": "loader", "type": "DataLoader", "worker": "edge", "colour": "green" }
                  ],
                  "io": [ { "request": "FetchItems", "worker": "ghost" } ]
                }
                """#.utf8).write(to: bad)
            let refused = try await runCommand(Products.launch, ["--check", bad.path], in: directory)
            #expect(refused.status == 2, "\(refused)")
            for path in ["$.workers[0].count", "$.machines[0].worker", "$.machines[1].colour", "$.io[0].worker"] {
                #expect(refused.stderr.contains(path), "no issue at \(path): \(refused)")
            }
            #expect(refused.stdout.isEmpty, "\(refused)")
        }
    }
}
