import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Grove
import GroveRuntime

@main
struct GroveBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grove-bench",
        abstract: "Measures events per second through a MachineHost against the bare update call.",
        discussion: """
            Runs three measurements side by side, interleaved, for --runs rounds, and prints the \
            median of each and its ratio to the bare loop. Build with -c release; pin to one core \
            with `taskset -c 0` to measure single-core throughput.
            """
    )

    @Option(help: "Events per measurement.")
    var events = 2_000_000

    @Option(help: "Rounds; the median is reported.")
    var runs = 7

    @Flag(help: "Print the result as JSON on stdout.")
    var json = false

    @Flag(help: "Measure the codecs instead: JSON against the binary codec, encode and decode.")
    var codec = false

    @Flag(help: "Measure what HostOptions.reissuesIO costs per event instead, for a small and a large state.")
    var reissue = false

    @Option(help: "With --reissue: the integers in the large state.")
    var reissueEntries = 10_000

    @Flag(help: "Measure the SQLite machine store instead: group commits of --store-records writes, each flush.")
    var store = false

    @Option(help: "With --store: writes (upserts or journal appends) per commit.")
    var storeRecords = 200

    @Option(help: "With --store: bytes per snapshot or event.")
    var storeBytes = 100

    @Option(help: "With --store: seconds per measurement.")
    var storeSeconds = 2.0

    func validate() throws {
        guard events > 0 else { throw ValidationError("--events must be positive, got \(events)") }
        guard runs > 0 else { throw ValidationError("--runs must be positive, got \(runs)") }
        guard reissueEntries > 0 else { throw ValidationError("--reissue-entries must be positive, got \(reissueEntries)") }
        guard storeRecords > 0, storeBytes >= 0, storeSeconds > 0, storeSeconds <= 3600 else {
            throw ValidationError("--store-records must be positive, --store-bytes at least 0, --store-seconds above 0 and at most 3600")
        }
    }

    func run() async throws {
        if store {
            let rows = try StoreBench.run(records: storeRecords, snapshotBytes: storeBytes, seconds: storeSeconds, runs: runs)
            print(StoreBench.table(rows, records: storeRecords, bytes: storeBytes, runs: runs))
            return
        }
        if reissue {
            let count = min(events, 200_000)
            let rows = try await ReissueBench.run(events: count, runs: runs, entries: reissueEntries)
            print(ReissueBench.table(rows, events: count, runs: runs))
            return
        }
        if codec {
            let iterations = min(events, 200_000)
            print(CodecBench.table(try CodecBench.run(iterations: iterations, runs: runs), iterations: iterations, runs: runs))
            return
        }
        var bare: [Double] = []
        var fireAndForget: [Double] = []
        var sendAndWait: [Double] = []
        let workload = (0..<events).map { $0 % 7 == 0 ? Counter.Event.add($0 & 3) : .increment }
        for round in 1...runs {
            bare.append(measureBare(workload))
            fireAndForget.append(try await measureFireAndForget(workload))
            sendAndWait.append(try await measureSendAndWait(workload))
            if isatty(2) == 1 { printError("round \(round)/\(runs) done") }
        }
        let report = Report(events: events, runs: runs,
                            bare: median(bare), fireAndForget: median(fireAndForget), sendAndWait: median(sendAndWait))
        print(json ? report.json : report.table)
    }

    private func measureBare(_ workload: [Counter.Event]) -> Double {
        var state = Counter.initialState
        let start = ContinuousClock.now
        for event in workload {
            _ = Counter.update(&state, event: event)
            blackHole(state) // per event, or the optimizer folds the whole loop into one addition
        }
        let elapsed = ContinuousClock.now - start
        return rate(workload.count, elapsed)
    }

    private func measureFireAndForget(_ workload: [Counter.Event]) async throws -> Double {
        let host = MachineHost(Counter.self, options: HostOptions(mailboxCapacity: workload.count + 1))
        host.start()
        let start = ContinuousClock.now
        for event in workload { try host.send(event) }
        let final = try await host.sendAndWait(.add(0))
        let elapsed = ContinuousClock.now - start
        blackHole(final)
        return rate(workload.count, elapsed)
    }

    private func measureSendAndWait(_ workload: [Counter.Event]) async throws -> Double {
        let host = MachineHost(Counter.self)
        host.start()
        var last = 0
        let start = ContinuousClock.now
        for event in workload { last = try await host.sendAndWait(event) }
        let elapsed = ContinuousClock.now - start
        blackHole(last)
        return rate(workload.count, elapsed)
    }
}

struct Report {
    var events: Int
    var runs: Int
    var bare: Double
    var fireAndForget: Double
    var sendAndWait: Double

    var table: String {
        func row(_ name: String, _ value: Double) -> String {
            let padded = name + String(repeating: " ", count: max(0, 22 - name.count))
            return "\(padded) \(format(value / 1e6, 2)) M events/s   \(format(value / bare * 100, 1)) % of bare"
        }
        return """
            medians of \(runs) rounds, \(events) events each
            \(row("bare update loop", bare))
            \(row("host fire-and-forget", fireAndForget))
            \(row("host send-and-wait", sendAndWait))
            """
    }

    var json: String {
        #"{"events":\#(events),"runs":\#(runs),"bare_per_s":\#(Int(bare)),"# +
            #""fire_and_forget_per_s":\#(Int(fireAndForget)),"send_and_wait_per_s":\#(Int(sendAndWait))}"#
    }
}

func rate(_ count: Int, _ elapsed: Duration) -> Double {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return Double(count) / seconds
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func format(_ value: Double, _ decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

/// Keeps the optimizer from deleting the work whose result this receives.
@_optimize(none)
func blackHole<T>(_ value: T) {}

/// Progress goes to stderr so stdout stays data.
func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
