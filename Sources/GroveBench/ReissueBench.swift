#if canImport(Glibc)
import Glibc
#endif
import Grove
import GroveRuntime

/// `grove-bench --reissue`: what `HostOptions.reissuesIO` costs per event. A host with it keeps
/// the state before each event, so that an io request the event starts can be derived again
/// after a restart; while `update` changes a collection of the state that copy keeps the old
/// buffer alive, and copy-on-write then copies the collection whole. Measured side by side,
/// interleaved round by round, for a small state (an `Int`) and a large one (an array of
/// `entries` integers, one of which each event changes).
enum ReissueBench {
    /// A ledger of `entries` balances; each event credits one of them.
    enum Ledger: Machine {
        struct State: Sendable {
            var balances: [Int]
        }

        enum Event: Sendable {
            case credit(Int)
        }

        static var initialState: State { State(balances: []) }

        static func update(_ state: inout State, event: Event) -> Effect {
            switch event {
            case .credit(let index): state.balances[index % state.balances.count] &+= 1
            }
            return .none
        }
    }

    struct Row {
        var machine: String
        var off: Double
        var on: Double
    }

    static func run(events: Int, runs: Int, entries: Int) async throws -> [Row] {
        let counting = (0..<events).map { $0 % 7 == 0 ? Counter.Event.add($0 & 3) : .increment }
        let crediting = (0..<events).map { Ledger.Event.credit($0) }
        let ledger = Ledger.State(balances: Array(repeating: 0, count: entries))
        var small: [(off: Double, on: Double)] = []
        var large: [(off: Double, on: Double)] = []
        for round in 1...runs {
            let smallOff = try await measure(Counter.self, counting, from: 0, reissuesIO: false)
            let smallOn = try await measure(Counter.self, counting, from: 0, reissuesIO: true)
            small.append((smallOff, smallOn))
            let largeOff = try await measure(Ledger.self, crediting, from: ledger, reissuesIO: false)
            let largeOn = try await measure(Ledger.self, crediting, from: ledger, reissuesIO: true)
            large.append((largeOff, largeOn))
            if isatty(2) == 1 { printError("round \(round)/\(runs) done") }
        }
        return [
            Row(machine: "small state (an Int)", off: median(small.map(\.off)), on: median(small.map(\.on))),
            Row(machine: "large state (\(entries) Ints)", off: median(large.map(\.off)), on: median(large.map(\.on))),
        ]
    }

    /// Events per second through a host, sent without waiting, then one read to wait for them.
    static func measure<M: Machine>(_ machine: M.Type, _ workload: [M.Event], from initial: M.State,
                                    reissuesIO: Bool) async throws -> Double where M.Env == Void {
        var options = HostOptions<M>(mailboxCapacity: workload.count + 1)
        options.reissuesIO = reissuesIO
        let host = MachineHost(M.self, initialState: initial, options: options)
        host.start()
        let start = ContinuousClock.now
        for event in workload { try host.send(event) }
        let final = try await host.sendAndWait(workload[0])
        let elapsed = ContinuousClock.now - start
        blackHole(final)
        await host.stop()
        return rate(workload.count, elapsed)
    }

    static func table(_ rows: [Row], events: Int, runs: Int) -> String {
        var lines = ["medians of \(runs) rounds, \(events) events each; HostOptions.reissuesIO off and on"]
        for row in rows {
            let name = row.machine + String(repeating: " ", count: max(0, 26 - row.machine.count))
            lines.append("\(name) off \(format(row.off / 1e6, 3)) M events/s   on \(format(row.on / 1e6, 3)) M events/s   "
                + "on/off \(format(row.on / row.off * 100, 1)) %")
        }
        return lines.joined(separator: "\n")
    }
}
