import Grove
import GroveCluster
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import HeapModule

/// Which idle keyed instances leave the worker's memory, and when those that left holding a
/// timer come back for it: pure, the clocks are arguments (`PassivationTests`).
///
/// Idleness is counted in sweeps, not read off a clock per event: a sweep runs every
/// ``period`` (half the shortest `passivateAfterMs` placed here), and an instance notes the
/// number of the sweep under way when a message reaches it (one store). At a sweep, an
/// instance last reached `n` sweeps ago has been idle for more than `(n - 1)` periods, so it
/// leaves between `passivateAfterMs` and one and a half times that after its last message.
///
/// A durable instance with a timer leaves with it (its record holds the timer at its
/// deadline); its wake time is kept here, in a heap sized by such instances only, so a worker
/// that passivated a million keys without timers keeps nothing for them.
struct Passivation {
    /// What becomes of one instance at a sweep.
    enum Verdict: Equatable {
        /// It stays in memory.
        case stay
        /// A durable instance: written (if it changed since its last commit) and dropped from
        /// memory; with `wakeAt`, brought back from the store then for its earliest timer.
        case passivate(wakeAt: Timestamp?)
        /// A non-durable instance holding only its state: dropped, state and all, as Akka
        /// Cluster Sharding and Orleans drop a passivated entity's memory. Its key's next event
        /// starts it afresh.
        case drop
    }

    /// Sweeps run no more often than this, whatever the topology says.
    static let shortestPeriod = Duration.milliseconds(10)

    /// `passivateAfterMs` by machine name, from the last welcome.
    private(set) var after: [String: Duration] = [:]
    /// By machine name, the sweeps an instance must go untouched before it may leave: the
    /// least `n` with `period * n >= passivateAfterMs`.
    private(set) var lag: [String: Int] = [:]
    /// How often sweeps run; nil while no machine placed here passivates.
    private(set) var period: Duration?
    /// The number of the sweep under way: what an instance notes when a message reaches it.
    private(set) var sweep = 0
    private(set) var nextSweep: ContinuousClock.Instant?

    private struct Wake: Comparable {
        var at: Timestamp
        var address: String
        static func < (lhs: Wake, rhs: Wake) -> Bool { lhs.at < rhs.at }
    }

    /// The wake times of passivated instances with timers, earliest first. An entry whose
    /// address came back earlier (``cameBack(_:)``) is stale: `wakeAt` no longer names it.
    private var wakes = Heap<Wake>()
    private var wakeAt: [String: Timestamp] = [:]

    /// How many passivated instances wait here for a timer.
    var waitingForTimers: Int { wakeAt.count }

    /// The earliest wake time, for the driver's one timer.
    var earliestWake: Timestamp? { wakes.min?.at }

    /// Takes the passivation settings of the machines a welcome places here.
    mutating func adopt(_ machines: [Welcome.HostedMachine], now: ContinuousClock.Instant) {
        after = [:]
        for machine in machines where machine.keyed {
            if let ms = machine.passivateAfterMs, ms > 0 { after[machine.name] = .milliseconds(ms) }
        }
        guard let shortest = after.values.min() else {
            period = nil
            nextSweep = nil
            // Nothing is judged any more: nothing is queued either (``queue(_:machine:touched:)``).
            lag = [:]
            queued = [[]]
            lastQueued = nil
            return
        }
        let period = max(Self.shortestPeriod, shortest / 2)
        self.period = period
        nextSweep = now + period
        lag = after.mapValues { after in
            var sweeps = 0
            while period * sweeps < after { sweeps += 1 }
            return sweeps
        }
        // What was queued was worked out from the settings before: the next sweep judges
        // every live instance and queues each again from there, in a ring sized for the
        // settings now.
        rescan = true
        queued = Array(repeating: [], count: (lag.values.max() ?? 0) + 2)
        lastQueued = nil
    }

    /// The machines of `machines` whose keyed instances may rest in the store: keyed, durable,
    /// with a `passivateAfterMs`. Recovery at start leaves those holding only their state
    /// there (``MachineStore/records(leavingResting:)``), and the coordinator is told them from
    /// the store (``WorkerRuntime/reportInstances()``).
    static func resting(_ machines: [Welcome.HostedMachine]) -> Set<String> {
        Set(machines.filter { $0.keyed && ($0.durability ?? .none) != .none && ($0.passivateAfterMs ?? 0) > 0 }.map(\.name))
    }

    /// Whether a sweep is due at `now`; if so it begins (its number goes up by one) and the
    /// next is scheduled.
    mutating func sweepBegins(now: ContinuousClock.Instant) -> Bool {
        guard let period, let nextSweep, now >= nextSweep else { return false }
        sweep += 1
        self.nextSweep = now + period
        return true
    }

    /// Instances judged per tick of the worker, at most: a sweep over a million live instances
    /// goes on over many ticks, so that no turn of the loop judges them all (each judgement asks
    /// the instance's host) and heartbeats and messages run between.
    static let judgedPerTick = 16_384

    /// The addresses the sweep under way has still to judge, the next last.
    private(set) var walk: [String] = []

    /// The addresses queued to be judged at a later sweep (``queue(_:machine:touched:)``), in
    /// the slot of its number modulo the ring's size: an instance is judged when it may first
    /// have been idle long enough, not at every sweep (three times before it left, with sweeps
    /// every half of its timeout). A sweep queued for is at most the longest ``lag`` plus one
    /// after the one under way, so no two sweeps queued for share a slot. A ring, not a
    /// dictionary by sweep: each fresh key is queued, and a dictionary hashed its sweep's
    /// number for each. An address may be here more than once (made again after it left, or
    /// queued again by a sweep that walked everything): the runtime judges the entry the
    /// instance last took (``WorkerRuntime/passivateIdle(now:)``).
    private var queued: [[String]] = [[]]

    /// The machine ``queue(_:machine:touched:)`` found last and its ``lag``: fresh keys of one
    /// machine come in runs, and each was a lookup by its name.
    private var lastQueued: (machine: String, lag: Int)?

    /// Whether the next sweep walks every live instance instead of those queued for it: the
    /// first after a welcome, whose settings may have changed what was queued and when.
    private(set) var rescan = true

    /// Whether the sweep under way walks every live instance (``rescan``), not only those queued
    /// for it.
    private(set) var walkIsFull = false

    /// The addresses to judge at this tick: at most `perTick` of the sweep under way, from where
    /// the last tick stopped; when none is under way and one is due at `now`, it begins with
    /// those queued for it, or after a welcome with the addresses `live` names then (read only
    /// then). A sweep does not begin before the last one's walk is over: sweeps that take
    /// longer than ``period`` only make instances leave later, never sooner (an instance last
    /// reached `n` sweeps ago was still idle `n - 1` periods at least).
    mutating func toJudge(now: ContinuousClock.Instant, live: @autoclosure () -> [String], perTick: Int = judgedPerTick) -> [String] {
        if walk.isEmpty {
            guard sweepBegins(now: now) else { return [] }
            walkIsFull = rescan
            if rescan {
                rescan = false
                for slot in queued.indices { queued[slot] = [] }
                walk = live()
            } else {
                walk = Swift.exchange(&queued[sweep % queued.count], with: [])
            }
        }
        let count = min(max(1, perTick), walk.count)
        defer { walk.removeLast(count) }
        return Array(walk.suffix(count))
    }

    /// Queues the instance at `address` of `machine`, last reached at sweep `touched`, to be
    /// judged at the first sweep it may have been idle long enough by then, and at least at the
    /// next: a new instance, one a sweep found reached since, or one that could not leave yet.
    /// - Returns: The number of that sweep; nil for a machine that does not passivate (its
    ///   instances are never judged).
    mutating func queue(_ address: String, machine: String, touched: Int) -> Int? {
        guard let at = slot(machine: machine, touched: touched) else { return nil }
        enqueue(address, at: at)
        return at
    }

    /// The sweep ``queue(_:machine:touched:)`` would queue an instance of `machine` last reached
    /// at sweep `touched` for, without queueing it; nil for a machine that does not passivate.
    mutating func slot(machine: String, touched: Int) -> Int? {
        let lag: Int
        if let last = lastQueued, last.machine == machine {
            lag = last.lag
        } else {
            guard let found = self.lag[machine] else { return nil }
            lag = found
            lastQueued = (machine, found)
        }
        // Within the ring (``queued``): `touched` is never past the sweep under way.
        return min(max(touched + 1 + lag, sweep + 1), sweep + queued.count - 1)
    }

    /// Queues `address` for sweep `at`, which ``slot(machine:touched:)`` gave at this sweep.
    mutating func enqueue(_ address: String, at: Int) {
        queued[at % queued.count].append(address)
    }

    /// How many entries are queued for later sweeps, stale ones included.
    var queuedCount: Int { queued.reduce(0) { $0 + $1.count } }

    /// Whether `machine`'s instances may passivate at all.
    func passivates(_ machine: String) -> Bool { after[machine] != nil }

    /// What becomes of an instance of `machine` at the sweep under way.
    /// - Parameters:
    ///   - touched: The sweep under way when a message last reached it (or it was made).
    ///   - resting: Whether its host holds anything but timers (``MachineHost/resting``): asked
    ///     only of an instance idle long enough, since asking walks the host's work in flight
    ///     (most instances a sweep judges were reached lately and stay).
    ///   - durable: Whether it has a store to come back from.
    func verdict(machine: String, touched: Int, resting: @autoclosure () -> Resting, durable: Bool) -> Verdict {
        guard idleLongEnough(machine: machine, touched: touched) else { return .stay }
        return Self.verdict(resting: resting(), durable: durable)
    }

    /// Whether an instance of `machine` last reached at sweep `touched` was idle long enough
    /// to leave at the sweep under way (false for a machine that does not passivate).
    func idleLongEnough(machine: String, touched: Int) -> Bool {
        judging.idleLongEnough(machine: machine, touched: touched)
    }

    /// What judges idleness at the sweep under way, taken once per tick: a driver that asked
    /// ``idleLongEnough(machine:touched:)`` of its stored `Passivation` per instance would
    /// work on a copy of all of it each time.
    var judging: Judging { Judging(after: after, lag: lag, period: period, sweep: sweep) }

    /// ``idleLongEnough(machine:touched:)`` at one sweep.
    struct Judging {
        let after: [String: Duration]
        /// ``Passivation/lag``.
        let lag: [String: Int]
        let period: Duration?
        let sweep: Int

        /// The last sweep an instance of `machine` may have been reached at to be idle long
        /// enough now: ``idleLongEnough(machine:touched:)`` is `touched <= idleThrough(machine)`.
        /// Nil for a machine that does not passivate.
        func idleThrough(machine: String) -> Int? {
            guard let lag = lag[machine] else { return nil }
            return sweep - 1 - lag
        }

        func idleLongEnough(machine: String, touched: Int) -> Bool {
            guard let after = after[machine], let period, (sweep - touched - 1) >= 0, period * (sweep - touched - 1) >= after else {
                return false
            }
            return true
        }
    }

    /// What becomes of an instance idle long enough (``idleLongEnough(machine:touched:)``),
    /// by what its host holds.
    static func verdict(resting: Resting, durable: Bool) -> Verdict {
        switch resting {
        case .busy:
            return .stay
        case .idle(let earliestTimer):
            if durable { return .passivate(wakeAt: earliestTimer) }
            // A non-durable timer has nowhere to wait: the instance stays for it.
            return earliestTimer == nil ? .drop : .stay
        }
    }

    /// The instance at `address` left memory; with `wakeAt`, it is to come back then.
    mutating func passivated(_ address: String, wakeAt: Timestamp?) {
        guard let wakeAt else { return }
        self.wakeAt[address] = wakeAt
        wakes.insert(Wake(at: wakeAt, address: address))
    }

    /// The instance at `address` came back (a message for it, or its wake): its wake, if any,
    /// is forgotten. Stale heap entries are dropped when they outnumber the live ones.
    mutating func cameBack(_ address: String) {
        guard !wakeAt.isEmpty, wakeAt.removeValue(forKey: address) != nil else { return }
        if wakes.count > 2 * wakeAt.count + 64 {
            wakes = Heap(wakeAt.map { Wake(at: $0.value, address: $0.key) })
        }
    }

    /// The passivated instances whose timers fall due by `now`, to bring back: each is
    /// forgotten here (its timer fires once it is restored).
    mutating func due(now: Timestamp) -> [String] {
        var due: [String] = []
        while let first = wakes.min, first.at <= now {
            _ = wakes.popMin()
            if wakeAt[first.address] == first.at {
                wakeAt[first.address] = nil
                due.append(first.address)
            }
        }
        return due
    }
}

extension Passivation {
    /// What the sweeps did since the last line, told at most every ``reportEvery``.
    struct Tally: Equatable {
        var written = 0
        var dropped = 0
        var lastTold: ContinuousClock.Instant?
    }

    static let reportEvery = Duration.seconds(5)

    /// The log line for a sweep that sent `written` durable instances to the store and dropped
    /// `dropped` non-durable ones, leaving `live` in memory: the first at once, then at most one
    /// every ``reportEvery`` summing what came between (a worker under load passivates at every
    /// sweep).
    static func line(_ tally: inout Tally, written: Int, dropped: Int, live: Int, waiting: Int,
                     now: ContinuousClock.Instant) -> String? {
        tally.written += written
        tally.dropped += dropped
        guard tally.written + tally.dropped > 0, tally.lastTold.map({ now - $0 >= reportEvery }) ?? true else { return nil }
        defer { tally = Tally(lastTold: now) }
        return "passivated \(tally.written + tally.dropped) idle instance(s): \(tally.written) written to the store, "
            + "\(tally.dropped) not durable dropped; \(live) in memory, \(waiting) passivated waiting for a timer"
    }
}
