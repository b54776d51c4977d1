import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// A StateMachinePackage transition that awaits, in flight when its worker is killed with
    /// SIGKILL: the restarted worker runs it again (at least once), with the event waiting behind
    /// it still waiting, for durability `journal` and `state`. `GatedAdder` (fsm-worker's test
    /// machines) awaits until a file exists, which the test creates after the kill.
    @Suite(.timeLimit(.minutes(2)))
    struct AwaitingRestartTests {
        static let topology = TopologyFile(
            name: "awaiting", transport: .ipc,
            workers: [.init(name: "w", arguments: ["--with-test-machines"])],
            machines: [.init(name: "adder", type: "GatedAdder", worker: "w", durability: "journal"),
                       .init(name: "adders", type: "GatedAdder", worker: "w", keyed: true, durability: "state")]
        )

        @Test func aTransitionInFlightWhenItsWorkerIsKilledRunsAgainAfterTheRestart() async throws {
            try await withCluster(Self.topology) { cluster in
                let gate = cluster.directory.appendingPathComponent("gate").path
                let five = #"{"add":{"amount":5,"gate":"\#(gate)"}}"#
                let seven = #"{"add":{"amount":7,"gate":"\#(gate)"}}"#
                for address in ["adder", "adders/x"] {
                    #expect(try await cluster.send(address, five)
                            == json(#"{"state":0,"inTransition":\#(five),"waiting":[],"started":1}"#))
                    #expect(try await cluster.send(address, seven)
                            == json(#"{"state":0,"inTransition":\#(five),"waiting":[\#(seven)],"started":1}"#))
                }

                try await cluster.killAndAwaitRestart("w", timeout: .seconds(20))
                // Restored with the transition in flight: it runs again (run 2), 7 still waits.
                for address in ["adder", "adders/x"] {
                    try await cluster.waitForState(address, "the transition started again") {
                        $0 == json(#"{"state":0,"inTransition":\#(five),"waiting":[\#(seven)],"started":2}"#)
                    }
                }
                #expect(FileManager.default.createFile(atPath: gate, contents: nil))
                for address in ["adder", "adders/x"] {
                    try await cluster.waitForState(address, "both added, once each") {
                        $0 == json(#"{"state":12,"waiting":[],"started":3}"#)
                    }
                }
            }
        }
    }
}
