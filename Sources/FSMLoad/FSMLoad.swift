import ArgumentParser
import GroveClient
import Synchronization
import Foundation
import GroveCluster
import GroveWire
import ZeroMQ

@main
struct FSMLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-load",
        abstract: "Drives a topology with events and reports throughput, latency, CPU and losses.",
        discussion: """
            Without --endpoint, launches the topology (default Topologies/load.json) with the fsm-launch \
            next to this executable and stops it afterwards. Each run sends events from --connections \
            client connections, each keeping up to --window requests in flight (or sending at --rate), \
            round robin over its share of --machines addresses of --machine (name/0 ... name/N-1 for a keyed \
            machine; the connections split the addresses between them).

            Modes: ack = events with the no-wait flag, acknowledged once the machine took them (queued, or \
            handled at once by an idle machine) \
            (fire-and-forget with acknowledged delivery); reply = events answered with the state they \
            committed (request-reply); raw = the echo kind through the same sockets (client → coordinator \
            → worker and back) with no codec and no machine. Unless --no-baseline, a raw run with the same \
            settings precedes the others, and the report gives Grove's rate as a share of it (with --rate, \
            Grove's p50 round trip over the raw one's instead).

            With a metrics endpoint (the launched topology's `metrics.listen`, or --metrics), each run \
            also reports the topology's own figures, from a scrape before and after it: requests the \
            coordinator routed, replies, busy, reply-dropped, events per worker, transitions and their \
            p50 and p99 (estimated from the histogram's buckets).

            Every event sent is counted once: acknowledged, failed (an error reply, by code) or lost (no \
            answer within 10 s after the run). Latency is from the intended send time (with --rate, a \
            schedule; otherwise the send), so a stalled system cannot hide its queueing delay.

            Exit status: 0 when every event was answered; 1 when events were lost, every event of \
            a run was refused (the report still prints), a connection failed or the topology could \
            not be launched or used; 64 for a bad command line.
            """
    )

    @Argument(help: "The topology to launch (ignored with --endpoint).")
    var topology: String = "Topologies/load.json"

    @Option(help: "Drive an already running topology at this clients endpoint instead of launching one.")
    var endpoint: String?

    @Option(help: "Runs to make, comma separated, from: raw, ack, reply.")
    var mode: String = "ack"

    @Option(help: ArgumentHelp("Roads to drive each mode by, comma separated, from: coordinator (every event through the coordinator), direct (straight to the worker that runs each address, as the coordinator's locate says; docs/DIRECT-ROUTES.md). Each mode runs once per road, in this order, in the same topology.", valueName: "roads"))
    var route: String = "coordinator"

    @Flag(help: "Skip the raw baseline run.")
    var noBaseline = false

    @Option(parsing: .unconditional, help: "Client connections, each on its own thread.")
    var connections: Int = 2

    @Option(help: "The machine to send to. Its events must include note(String), as the shipped Counter's do: fsm-load sends {\"note\":{\"_0\":\"xx…\"}}.")
    var machine: String = "counter"

    @Option(parsing: .unconditional, help: "How many addresses: instances name/0 ... name/N-1 of a keyed machine (default: 1000); a single machine is one address.")
    var machines: Int?

    @Option(parsing: .unconditional, help: "Event payload size in bytes, in either codec (a note event padded to this size); at most 1 MiB, the coordinator's limit.")
    var payloadSize: Int = 64

    // Numbers are read even when they start with a dash, so `--duration -1` is refused for what
    // it is rather than taken for an option.
    @Option(parsing: .unconditional, help: "Seconds per run.")
    var duration: Double = 5

    @Option(parsing: .unconditional, help: "Events per connection per run instead of a duration (at least 1).")
    var count: Int?

    @Option(parsing: .unconditional, help: "Requests in flight per connection.")
    var window: Int = 1000

    @Option(parsing: .unconditional, help: "Events per ZeroMQ message (batching); 1 sends each event on its own; at most --window and 10000 (limits.batchEnvelopes' default). With --rate, the events due at the same moment leave together, up to this many per message. Batched runs need a window of several batches to keep the pipeline full (Scripts/bench.sh uses --batch 200 --window 4000).")
    var batch: Int = 1

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "With --rate and --batch: hold an event that fell due up to this many microseconds, so that more leave in one message (a full batch, and what is due when a timed run ends, leave at once). Latency still counts from each event's scheduled time, so the hold is measured. 0, the default, holds nothing: what is due leaves as soon as the connection wakes.",
        valueName: "micros"))
    var linger: Int = 0

    @Option(help: "Event payload codec: json, or binary (GroveWire's compact codec; the header's binary flag).")
    var codec: String = "json"

    @Option(parsing: .unconditional, help: "Target events per second over all connections (a latency run); default: as fast as the window allows.")
    var rate: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Before each run, send the same load (rate, batching, addresses) for this many seconds and leave it out of the report: machines are spawned and buffers and caches warm, so the run shows steady state. Every warm-up event is answered before the run starts. One lost, or every one refused, stops fsm-load with an error (the runs already made are reported first); some refused are told on stderr. 0, the default, warms nothing; otherwise from 0.001 to 3600.",
        valueName: "seconds"))
    var warmup: Double = 0

    @Option(parsing: .unconditional, help: "Before the runs, spawn this many keyed instances (one event each) and report memory per idle instance.")
    var spawn: Int?

    @Option(help: ArgumentHelp("The topology's Prometheus endpoint (http://127.0.0.1:9464/metrics), scraped before and after each run for its own figures. Default: the launched topology's, when it sets metrics.listen.", valueName: "url"))
    var metrics: String?

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    @Flag(help: "After each ack or reply run, read the driven machines' counts back (their state must be {\"count\": N}, as the shipped Counter's) and check that every acknowledged event was applied, none twice: for durability checks with workers killed during the run, on a durable machine (a count that went back, its state lost, is told as such). Exit status 1 when it does not hold.")
    var verify = false

    @Flag(help: "Give every event an idempotency key and send it again with the same key when answered worker-lost, unavailable or busy, or not answered within 3 s (at most 12 sends, 100 ms doubling to 2 s apart; on the direct road also moved, and the copy goes through the coordinator, as does the rest of that worker's share once one did): the worker answers a key it applied already with its first answer (or already-applied, counted acknowledged once, when it no longer keeps it). At most 64 events per address are unanswered at once, so that no event that never ran is refused key-too-old. Implies --verify, which then reports events lost (acknowledged, not in the counts) and applied twice; exit status 1 when either is not 0.")
    var retry = false

    @Option(help: ArgumentHelp("This client's secret key file (NAME.key_secret), for a coordinator that speaks CURVE. Default: $\(Credentials.keyFileVariable).", valueName: "file"))
    var keyFile: String?

    // Unconditional: a Z85 key may start with `-`, which would otherwise read as an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("The coordinator's public key: its .key file or the 40 Z85 characters. Default: $\(Credentials.coordinatorKeyVariable).", valueName: "key"))
    var coordinatorKey: String?

    /// Read once, in `run`: every connection shares them.
    var credentials: Credentials? { get throws { try Credentials.resolve(keyFile: keyFile, coordinatorKey: coordinatorKey) } }

    func validate() throws {
        guard connections > 0 else { throw ValidationError("--connections must be at least 1") }
        if let machines, machines < 1 { throw ValidationError("--machines must be at least 1") }
        guard payloadSize >= 16 else { throw ValidationError("--payload-size must be at least 16 bytes (the smallest event)") }
        guard payloadSize <= 1 << 20 else {
            throw ValidationError("--payload-size must be at most 1048576 bytes: the coordinator refuses larger payloads as oversized")
        }
        // A batch message must stay under the coordinator's 16 MiB message limit (ZeroMQ drops larger ones).
        guard (payloadSize + 64) * batch <= 16 << 20 else {
            throw ValidationError("--payload-size × --batch is over the coordinator's 16 MiB message limit; lower one of them")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let spawn, spawn < 1 { throw ValidationError("--spawn must be at least 1") }
        guard duration > 0, duration.isFinite else { throw ValidationError("--duration must be a positive number of seconds") }
        guard duration <= 1_000_000 else { throw ValidationError("--duration must be at most 1000000 seconds") }
        guard warmup == 0 || (warmup >= 0.001 && warmup <= 3600) else {
            throw ValidationError("--warmup must be 0 (none) or from 0.001 to 3600 seconds, got \(String(format: "%g", warmup))")
        }
        guard window > 0 else { throw ValidationError("--window must be at least 1") }
        guard batch > 0 else { throw ValidationError("--batch must be at least 1 (1 sends each event on its own), got \(batch)") }
        // A batch of more envelopes than limits.batchEnvelopes is refused whole, by the coordinator and by a direct worker.
        let envelopes = Topology.Limits().batchEnvelopes
        guard batch <= envelopes else {
            throw ValidationError("--batch \(batch) is above \(envelopes), the most envelopes a topology accepts in one batch by default "
                                  + "(limits.batchEnvelopes); lower --batch, or send from more --connections")
        }
        guard batch <= window else {
            throw ValidationError("--batch \(batch) is above --window \(window) (requests in flight per connection); lower --batch or raise --window")
        }
        guard codec == "json" || codec == "binary" else { throw ValidationError("--codec must be json or binary, got '\(codec)'") }
        if let rate {
            guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number of events per second") }
            guard rate >= 0.001 else { throw ValidationError("--rate must be at least 0.001 events per second") }
        }
        if linger != 0 {
            guard (0...1_000_000).contains(linger) else {
                throw ValidationError("--linger must be from 0 (hold nothing) to 1000000 microseconds, got \(linger)")
            }
            guard rate != nil else {
                throw ValidationError("--linger holds events of a paced run; add --rate (without it events leave as the window allows)")
            }
            guard batch > 1 else {
                throw ValidationError("--linger holds events so that several leave in one message; add --batch above 1 (e.g. --batch 200)")
            }
        }
        if let metrics, !metrics.hasPrefix("http://") {
            throw ValidationError("--metrics must be an http:// URL like http://127.0.0.1:9464/metrics, got '\(metrics)'")
        }
        for name in route.split(separator: ",", omittingEmptySubsequences: false) where LoadRoute(rawValue: String(name)) == nil {
            throw ValidationError(name.isEmpty ? "--route has an empty entry in '\(route)'; list roads like coordinator,direct"
                                               : "unknown road '\(name)'; use coordinator or direct")
        }
        let names = mode.split(separator: ",", omittingEmptySubsequences: false)
        for name in names where LoadPlan.Mode(rawValue: String(name)) == nil {
            throw ValidationError(name.isEmpty ? "--mode has an empty entry in '\(mode)'; list runs like ack,reply"
                                               : "unknown mode '\(name)'; use raw, ack or reply")
        }
    }

    func run() throws {
        var launched: LaunchedTopology?
        if endpoint == nil {
            guard FileManager.default.fileExists(atPath: topology) else {
                throw LoadError("topology file '\(topology)' not found (relative paths start at \(FileManager.default.currentDirectoryPath)); "
                    + "pass its path, or --endpoint to drive a running topology")
            }
            let launcher = Self.executableDirectory().appendingPathComponent("fsm-launch")
            launched = try LaunchedTopology(topology: topology, launcher: launcher)
        }
        defer { launched?.stop() }
        let endpoint = endpoint ?? launched!.endpoint
        let metricsURL = metrics ?? launched?.metricsURL
        let credentials = try credentials
        let client = try Client(endpoint: endpoint, timeout: .seconds(5), credentials: credentials)
        let listing = try client.list()
        let pids = Self.processIDs(listing)
        // A worker killed in one run is a new process in the next: each run asks again.
        let relist = { (try? client.list()).map(Self.processIDs) }
        guard let spec = listing.machines.first(where: { $0.name == machine }) else {
            throw LoadError("topology '\(listing.topology)' has no machine '\(machine)'; it has \(listing.machines.map(\.name).joined(separator: ", "))")
        }
        if !spec.keyed, let machines, machines != 1 {
            throw LoadError("--machines \(machines) needs a keyed machine; '\(machine)' is single, so it is one address (drop --machines, or pick a keyed machine)")
        }
        let addresses = spec.keyed ? (0..<(machines ?? 1000)).map { "\(machine)/\($0)" } : [machine]

        var report = LoadReport(topology: listing.topology, endpoint: endpoint, machine: machine, connections: connections, addresses: addresses.count,
                                payloadBytes: payloadSize, window: window, batch: batch, codec: codec,
                                rate: rate, lingerMicros: linger > 0 ? linger : nil, warmupSeconds: warmup > 0 ? warmup : nil, durationSeconds: count == nil ? duration : nil, countPerConnection: count, runs: [])
        if let spawn {
            guard spec.keyed else { throw LoadError("--spawn needs a keyed machine; '\(machine)' is single") }
            report.spawn = try spawnInstances(spawn, endpoint: endpoint, pids: pids)
        }
        var modes = mode.split(separator: ",").compactMap { LoadPlan.Mode(rawValue: String($0)) }
        if !noBaseline, !modes.contains(.raw) { modes.insert(.raw, at: 0) }
        let roads = route.split(separator: ",").compactMap { LoadRoute(rawValue: String($0)) }
        var location: Location?
        if roads.contains(.direct) {
            location = try locateForDirect(client: client, addresses: addresses)
        }
        var spawned = false
        for mode in modes {
            for road in roads {
                let binary = codec == "binary"
                let plan = LoadPlan(mode: mode, addresses: addresses, payload: try Self.payload(size: payloadSize, binary: binary), window: window,
                                    count: count, duration: .seconds(duration), ratePerConnection: rate.map { $0 / Double(connections) },
                                    batch: batch, linger: .microseconds(linger), binary: binary, retry: retry)
                if road == .direct, mode != .raw, !spawned {
                    // A direct event never starts a keyed instance: each is started through the
                    // coordinator first, before the counts are read.
                    try spawnForDirect(plan, endpoint: endpoint)
                    spawned = true
                }
                if road == .direct {
                    // Where the machine lives now: a worker killed in an earlier run came back on
                    // a new endpoint, and a run that began with the old one would send that
                    // worker's share through the coordinator until it located again.
                    location = (try? locateForDirect(client: client, addresses: addresses)) ?? location
                }
                if warmup > 0 {
                    do {
                        let scraped = metricsURL.flatMap { scrape($0) }
                        let acknowledged = try warmUp(plan, endpoint: endpoint, direct: road == .direct ? location : nil)
                        // The warm-up's figures reach the coordinator with the workers' next
                        // heartbeats: waited for, so that they are not counted in the run's.
                        if let metricsURL, let scraped, plan.mode != .raw {
                            _ = figures(since: scraped, at: metricsURL, acknowledged: acknowledged)
                        }
                    } catch {
                        // The runs that finished before it are still reported.
                        if !report.runs.isEmpty { try publish(&report) }
                        throw error
                    }
                }
                let counts = (verify || retry) && mode != .raw ? CountReader(endpoint: endpoint, credentials: credentials) : nil
                let before = try counts?.counts(of: addresses)
                let scraped = metricsURL.flatMap { scrape($0) }
                var run = try measure(plan, endpoint: endpoint, pids: relist() ?? pids, relist: relist, direct: road == .direct ? location : nil)
                if road == .direct { run.route = road.rawValue }
                if let metricsURL, let scraped {
                    run.topologyFigures = figures(since: scraped, at: metricsURL, acknowledged: mode == .raw ? 0 : run.acknowledged)
                }
                if let counts, let before {
                    run.verification = Verification(acknowledged: run.acknowledged, sent: run.sent, before: before, after: try counts.counts(of: addresses))
                }
                report.runs.append(run)
            }
        }
        try publish(&report)
        for run in report.runs where run.acknowledged == 0 && run.failed > 0 {
            let codes = run.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            FileHandle.standardError.write(Data("fsm-load: every event of the \(run.mode) run was refused (\(codes))\(refusalHint(run.errors))\n".utf8))
        }
        if report.runs.contains(where: { $0.lost > 0 || ($0.acknowledged == 0 && $0.failed > 0) || $0.verification?.holds == false }) {
            throw ExitCode(1)
        }
    }

    /// Adds the comparisons with the raw baseline and prints the report (text, or JSON).
    func publish(_ report: inout LoadReport) throws {
        if let raw = report.runs.first(where: { $0.mode == "raw" }) {
            for index in report.runs.indices where report.runs[index].mode != "raw" {
                if rate == nil, raw.eventsPerSecond > 0 {
                    report.runs[index].shareOfRaw = report.runs[index].eventsPerSecond / raw.eventsPerSecond
                } else if rate != nil, let rawP50 = raw.latencyMicros["p50"], rawP50 > 0, let p50 = report.runs[index].latencyMicros["p50"] {
                    // Paced alike, the rates match: the round trips are what compares.
                    report.runs[index].p50OverRaw = Double(p50) / Double(rawP50)
                }
            }
        }
        if json {
            print(String(decoding: try WireJSON.encode(report), as: UTF8.self))
        } else {
            print(report.text())
        }
    }

    /// A scrape of `url`, or nil (told on stderr: the run goes on without the figures).
    func scrape(_ url: String) -> MetricsText? {
        do {
            return try MetricsScrape.get(url)
        } catch {
            FileHandle.standardError.write(Data("fsm-load: no topology figures: \(error)\n".utf8))
            return nil
        }
    }

    /// The figures since `before`, once the workers' have caught up with `acknowledged` events
    /// (they come with heartbeats); after 5 s, what is there.
    func figures(since before: MetricsText, at url: String, acknowledged: Int) -> TopologyFigures? {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            guard let after = scrape(url) else { return nil }
            let figures = TopologyFigures(before: before, after: after)
            if figures.caughtUp(with: acknowledged) || ContinuousClock.now >= deadline { return figures }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// What to do about refusals with these codes, after a `;`, or nothing.
    func refusalHint(_ errors: [String: Int]) -> String {
        guard errors["undecodable-event"] != nil else { return "" }
        return "; fsm-load sends note(String) events, which '\(machine)' does not accept: pick a machine whose Event has that case"
    }

    /// The processes whose CPU a run reports, by name: fsm-load, the coordinator, each worker.
    static func processIDs(_ listing: Listing) -> [String: Int32] {
        var pids: [String: Int32] = ["fsm-load": getpid()]
        if let pid = listing.coordinatorPid { pids["coordinator"] = pid }
        for worker in listing.workers { if let pid = worker.pid { pids[worker.name] = pid } }
        return pids
    }

    /// Runs `plan` and reports it, with the CPU each of `pids` spent meanwhile. `relist` names
    /// the processes again after the run: a worker killed and restarted during it is reported by
    /// its new process's CPU, and listed as restarted (the killed one's can no longer be read).
    func measure(_ plan: LoadPlan, endpoint: String, pids: [String: Int32], relist: () -> [String: Int32]? = { nil },
                 label: String? = nil, direct location: Location? = nil) throws -> RunReport {
        let before = pids.compactMapValues { ProcessStats.read(pid: $0) }
        let progress = LoadConnection.Progress()
        let results = Mutex(ConnectionResult())
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        let context = try ZMQContext()
        defer { context.terminate() }
        for index in 0..<connections {
            // Each connection drives its own share of the addresses, so that every address is
            // sent to (and spawning makes as many instances as it reports).
            var share = plan
            if plan.addresses.count >= connections {
                share.addresses = stride(from: index, to: plan.addresses.count, by: connections).map { plan.addresses[$0] }
            }
            let legs = try location.map { try LoadLegs.direct(share, location: $0, coordinator: endpoint, credentials: credentials) }
                ?? LoadLegs.coordinator(endpoint, credentials: try credentials, addresses: share.addresses.count)
            // Correlations start at index << 48, so that none repeats across connections.
            let connection = LoadConnection(context: context, legs: legs, plan: share, index: index, progress: progress)
            group.enter()
            let thread = Thread {
                do {
                    let result = try connection.run()
                    results.withLock { $0.merge(result) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                group.leave()
            }
            thread.start()
        }
        let tty = isatty(STDERR_FILENO) == 1
        let started = Date()
        while group.wait(timeout: .now() + 1) == .timedOut {
            if tty {
                let rate = Double(progress.value) / Date().timeIntervalSince(started)
                FileHandle.standardError.write(Data(String(format: "\r%@: %d answered, %.0f events/s   ", label ?? plan.mode.rawValue, progress.value, rate).utf8))
            }
        }
        if tty { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        if let failure = failures.withLock({ $0.first }) {
            throw LoadError("a connection failed\(label.map { " during the \($0)" } ?? ""): \(failure)")
        }
        let now = pids.isEmpty ? pids : relist() ?? pids
        var cpu: [String: Double] = [:]
        var restarted: [String] = []
        for (name, pid) in now {
            guard let stats = ProcessStats.read(pid: pid) else { continue }
            if pids[name] == pid, let start = before[name] {
                cpu[name] = stats.cpuSeconds - start.cpuSeconds
            } else if pids[name] != pid {
                cpu[name] = stats.cpuSeconds // started during the run: all of it is the run's
                restarted.append(name)
            }
        }
        return RunReport(mode: plan.mode, result: results.withLock { $0 }, cpu: cpu, restarted: restarted.sorted())
    }

    /// Runs `plan` for ``warmup`` seconds, unreported. Refusals are told on stderr (the run that
    /// follows reports its own); a lost event is an error, as in a run.
    /// - Returns: The events acknowledged.
    func warmUp(_ plan: LoadPlan, endpoint: String, direct location: Location?) throws -> Int {
        var warm = plan
        warm.count = nil
        warm.duration = .seconds(warmup)
        let run = try measure(warm, endpoint: endpoint, pids: [:], label: "\(plan.mode.rawValue) warm-up", direct: location)
        if run.lost > 0 {
            throw LoadError("the warm-up before the \(plan.mode.rawValue) run lost \(run.lost) of \(run.sent) events (no answer within 10 s); "
                + "the topology did not keep up with this load or a worker went away: check fsm-launch's log")
        }
        guard run.failed > 0 else { return run.acknowledged }
        let codes = run.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
        if run.acknowledged == 0 {
            // The run would only be refused too.
            throw LoadError("every event of the warm-up before the \(plan.mode.rawValue) run was refused (\(codes))\(refusalHint(run.errors))")
        }
        FileHandle.standardError.write(Data("fsm-load: the warm-up before the \(plan.mode.rawValue) run had \(run.failed) of \(run.sent) events refused (\(codes))\n".utf8))
        return run.acknowledged
    }

    /// Sends one event to each of `count` new keyed instances and measures the workers' memory.
    func spawnInstances(_ count: Int, endpoint: String, pids: [String: Int32]) throws -> SpawnReport {
        let workers = pids.filter { $0.key != "fsm-load" && $0.key != "coordinator" }
        let client = try Client(endpoint: endpoint, timeout: .seconds(10), credentials: try credentials)
        /// The keyed instances of the machine the coordinator has seen spawned.
        func instances() throws -> Int {
            try client.list().machines.first { $0.name == machine }?.instanceCount ?? 0
        }
        let instancesBefore = try instances()
        let before = workers.compactMapValues { ProcessStats.read(pid: $0)?.residentBytes }.values.reduce(0, +)
        let plan = LoadPlan(mode: .ack, addresses: (0..<count).map { "\(machine)/spawn-\($0)" }, payload: Self.payload(size: 16),
                            window: window, count: (count + connections - 1) / connections, duration: .seconds(3600), ratePerConnection: nil,
                            batch: batch)
        let started = ContinuousClock.now
        let run = try measure(plan, endpoint: endpoint, pids: [:])
        let seconds = (ContinuousClock.now - started).seconds
        if run.lost > 0 || run.failed > 0 {
            throw LoadError("spawning lost \(run.lost) and failed \(run.failed) events: \(run.errors)")
        }
        let after = workers.compactMapValues { ProcessStats.read(pid: $0)?.residentBytes }.values.reduce(0, +)
        // Counted by the coordinator, not assumed: instances that already existed are not new.
        let spawned = try instances() - instancesBefore
        return SpawnReport(instances: spawned, seconds: seconds, residentBytesAdded: after - before,
                           bytesPerInstance: Double(after - before) / Double(max(1, spawned)))
    }

    /// The load machine's `note` event, as the worker's `Counter.Event.note(String)` decodes it.
    enum LoadEvent: Codable { case note(String) }

    /// A `note` event padded to `size` bytes, in JSON or in the binary codec.
    static func payload(size: Int, binary: Bool) throws -> [UInt8] {
        guard binary else { return payload(size: size) }
        let bare = try BinaryCodec.encode(LoadEvent.note("")).count
        // The string's length prefix may grow by a byte or two as the padding does.
        var padding = max(0, size - bare)
        while padding > 0, try BinaryCodec.encode(LoadEvent.note(String(repeating: "x", count: padding))).count > size { padding -= 1 }
        return try BinaryCodec.encode(LoadEvent.note(String(repeating: "x", count: padding)))
    }

    /// `{"note":{"_0":"xxxx"}}` padded to `size` bytes.
    static func payload(size: Int) -> [UInt8] {
        let frame = #"{"note":{"_0":""}}"#
        return Array((#"{"note":{"_0":""# + String(repeating: "x", count: max(0, size - frame.utf8.count)) + #""}}"#).utf8)
    }

    static func executableDirectory() -> URL {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).deletingLastPathComponent()
    }
}
