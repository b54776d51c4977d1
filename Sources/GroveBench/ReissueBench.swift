#if canImport(Glibc)
import Glibc
#endif
import Grove
import GroveRuntime

/// `grove-bench --reissue`: what `HostOptions.reissuesIO` costs per event. A host with it keeps
/// the state before each event of a machine type that declares `startsReissuableIO`, so that an
/// io request the event starts can be derived again after a restart; while `update` changes a
/// collection of the state that copy keeps the old buffer alive, and copy-on-write then copies
/// the collection whole. Measured side by side, interleaved round by round, for a small state
/// (an `Int`) and a large one (an array of `entries` integers, one of which each event
/// changes): the option off, on for a machine that does not declare it, and on for one that
/// does (what every durable host paid before the declaration existed).
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

    /// `M`, declaring that it starts re-issuable io. The benchmark's machines return no effect.
    enum Declaring<M: Machine>: Machine where M.Env == Void {
        static var initialState: M.State { M.initialState }
        static var startsReissuableIO: Bool { true }

        static func update(_ state: inout M.State, event: M.Event) -> Effect {
            _ = M.update(&state, event: event)
            return .none
        }
    }

    struct Row {
        var machine: String
        var off: Double
        var undeclared: Double
        var declared: Double
    }

    static func run(events: Int, runs: Int, entries: Int) async throws -> [Row] {
        let counting = (0..<events).map { $0 % 7 == 0 ? Counter.Event.add($0 & 3) : .increment }
        let crediting = (0..<events).map { Ledger.Event.credit($0) }
        let ledger = Ledger.State(balances: Array(repeating: 0, count: entries))
        var small: [Row] = []
        var large: [Row] = []
        for round in 1...runs {
            // The three in a different order each round: none always runs first.
            var row = (small: Row(machine: "", off: 0, undeclared: 0, declared: 0), large: Row(machine: "", off: 0, undeclared: 0, declared: 0))
            for turn in 0..<3 {
                switch (turn + round) % 3 {
                case 0:
                    row.small.off = try await measure(Counter.self, counting, from: 0, reissuesIO: false)
                    row.large.off = try await measure(Ledger.self, crediting, from: ledger, reissuesIO: false)
                case 1:
                    row.small.undeclared = try await measure(Counter.self, counting, from: 0, reissuesIO: true)
                    row.large.undeclared = try await measure(Ledger.self, crediting, from: ledger, reissuesIO: true)
                default:
                    row.small.declared = try await measure(Declaring<Counter>.self, counting, from: 0, reissuesIO: true)
                    row.large.declared = try await measure(Declaring<Ledger>.self, crediting, from: ledger, reissuesIO: true)
                }
            }
            small.append(row.small)
            large.append(row.large)
            if isatty(2) == 1 { printError("round \(round)/\(runs) done") }
        }
        func medians(_ rows: [Row], _ name: String) -> Row {
            Row(machine: name, off: median(rows.map(\.off)), undeclared: median(rows.map(\.undeclared)),
                declared: median(rows.map(\.declared)))
        }
        return [medians(small, "small state (an Int)"), medians(large, "large state (\(entries) Ints)")]
    }

    /// Events per second of the process's CPU time through a host, sent without waiting, then
    /// one read to wait for them. CPU time rather than the wall clock: on a shared machine the
    /// wall clock also counts the time other processes held the cores.
    static func measure<M: Machine>(_ machine: M.Type, _ workload: [M.Event], from initial: M.State,
                                    reissuesIO: Bool) async throws -> Double where M.Env == Void {
        var options = HostOptions<M>(mailboxCapacity: workload.count + 1)
        options.reissuesIO = reissuesIO
        let host = MachineHost(M.self, initialState: initial, options: options)
        host.start()
        let start = processCPUTime()
        for event in workload { try host.send(event) }
        let final = try await host.sendAndWait(workload[0])
        let elapsed = processCPUTime() - start
        blackHole(final)
        await host.stop()
        return rate(workload.count, elapsed)
    }

    /// The CPU time of every thread of this process so far.
    static func processCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    static func table(_ rows: [Row], events: Int, runs: Int) -> String {
        var lines = [
            "medians of \(runs) rounds, \(events) events each, M events per CPU second; HostOptions.reissuesIO off, on for a machine",
            "that does not declare startsReissuableIO, on for one that does (every durable host before it existed)",
        ]
        for row in rows {
            let name = row.machine + String(repeating: " ", count: max(0, 26 - row.machine.count))
            lines.append("\(name) off \(format(row.off / 1e6, 3))   undeclared \(format(row.undeclared / 1e6, 3)) "
                + "(\(format(row.undeclared / row.off * 100, 1)) %)   declared \(format(row.declared / 1e6, 3)) "
                + "(\(format(row.declared / row.off * 100, 1)) %)")
        }
        return lines.joined(separator: "\n")
    }
}
