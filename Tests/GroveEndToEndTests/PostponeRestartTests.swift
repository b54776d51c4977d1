import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Issue 36, item 2: the events a durable machine postponed are part of what it stores, so
    /// a worker killed with SIGKILL while it holds them comes back holding them, and the change
    /// of state after the restart delivers them again, in the order they came. Real processes
    /// over ipc, `Turnstile` of `fsm-worker --with-test-machines`, for both durabilities that
    /// keep them: `state` (the record holds them) and `journal` (replay works them out).
    @Suite(.timeLimit(.minutes(2)))
    struct PostponeRestartTests {
        static func topology(_ name: String, durability: String) -> TopologyFile {
            TopologyFile(
                name: name, transport: .ipc,
                workers: [.init(name: "w", arguments: ["--with-test-machines"])],
                machines: [.init(name: "gate", type: "Turnstile", worker: "w", durability: durability)]
            )
        }

        @Test(arguments: ["state", "journal"])
        func postponedEventsSurviveAKilledWorkerAndComeInOrderOnUnlock(durability: String) async throws {
            try await withCluster(Self.topology("postpone-restart-\(durability)", durability: durability)) { cluster in
                for rider in ["ann", "bob", "cy"] {
                    let reply = try await cluster.send("gate", #"{"pass":{"rider":"\#(rider)"}}"#)
                    #expect(reply["locked"] == json("true"), "\(rider) waits at the locked gate: \(reply)")
                    #expect(reply["passed"] == json("[]"), "\(reply)")
                }
                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))

                let restored = try await cluster.state("gate")
                #expect(restored["locked"] == json("true"), "\(restored)")
                #expect(restored["passed"] == json("[]"), "nobody passed while it was locked: \(restored)")
                _ = try await cluster.send("gate", "unlock")
                let done = try await cluster.waitForState("gate", "the three riders passed", timeout: .seconds(30)) {
                    $0["passed"]?.arrayValue?.count == 3
                }
                #expect(done["passed"] == json(#"["ann","bob","cy"]"#), "in the order they came: \(done)")
                #expect(done["locked"] == json("false"), "\(done)")
            }
        }
    }
}
