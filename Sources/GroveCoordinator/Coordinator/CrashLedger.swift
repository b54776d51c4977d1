import GroveCluster
import GroveWire

/// The coordinator's memory of worker crashes, as a pure value: each crash a restarted worker
/// reports (the event its previous process died running), attributed to the event's pattern
/// (machine type and event case) and, when a client with a key sent it, to that key. A pattern
/// that crashes `quarantineAfter` times within the period is quarantined for every address; a
/// key whose events crash `suspendAfter` times is suspended. The crashes that led to a
/// quarantine or a suspension are forgiven: the supervisor takes them out of the worker group's
/// intensity count, since the input that caused them can no longer reach a machine.
///
/// Bounded: at most ``keptCrashes`` crashes are remembered (a worker restarts at most a few
/// times a second), and only as many suspensions as the topology has client keys.
struct CrashLedger {
    /// One worker crash, as the restarted process reported it.
    struct Crash: Equatable {
        let worker: String
        /// The process that crashed, when the coordinator had it registered.
        let pid: Int32?
        let at: ContinuousClock.Instant
        let address: String
        /// Nil when the event had no case (or was not recorded).
        let pattern: PoisonPattern?
        /// The client key (Z85) whose request carried the event; nil for a trusted client, a
        /// route, a timer, the machine's work, or an event that was queued before it ran.
        let sender: String?
        /// Taken out of the supervisor's count already.
        var forgiven = false
    }

    struct Quarantine: Equatable {
        var crashes: Int
        var since: ContinuousClock.Instant
        /// The addresses it crashed, most recent last.
        var addresses: [String]
    }

    struct Suspension: Equatable {
        var crashes: Int
        var since: ContinuousClock.Instant
        var patterns: [PoisonPattern]
    }

    /// What counting one crash decided.
    struct Verdict: Equatable {
        /// The pattern this crash quarantined, when it did.
        var quarantined: PoisonPattern?
        /// The key this crash suspended, when it did.
        var suspended: String?
        /// The crashes (this one and earlier ones) that no longer count toward escalation.
        var forgiven: [Crash] = []
        /// How many crashes of its pattern and of its sender are counted now (this one included).
        var patternCrashes = 0
        var senderCrashes = 0
    }

    static let keptCrashes = 1024
    /// Addresses kept per quarantined pattern, for people.
    static let keptAddresses = 5

    let settings: Topology.PoisonSettings
    private(set) var crashes: [Crash] = []
    private(set) var quarantined: [PoisonPattern: Quarantine] = [:]
    private(set) var suspended: [String: Suspension] = [:]

    init(settings: Topology.PoisonSettings) {
        self.settings = settings
    }

    /// Counts `crash`; quarantines its pattern and suspends its sender when they reach their
    /// thresholds within the period, and says which crashes that forgives.
    mutating func count(_ crash: Crash) -> Verdict {
        let period = Duration.milliseconds(settings.periodMs)
        crashes.removeAll { crash.at - $0.at >= period }
        if crashes.count >= Self.keptCrashes { crashes.removeFirst(crashes.count - Self.keptCrashes + 1) }
        crashes.append(crash)
        var verdict = Verdict()
        if let pattern = crash.pattern {
            let counted = crashes.filter { $0.pattern == pattern }
            verdict.patternCrashes = counted.count
            if settings.quarantineAfter > 0, counted.count >= settings.quarantineAfter, quarantined[pattern] == nil {
                quarantined[pattern] = Quarantine(crashes: counted.count, since: crash.at,
                                                  addresses: Array(counted.map(\.address).suffix(Self.keptAddresses)))
                verdict.quarantined = pattern
                verdict.forgiven += forgive { $0.pattern == pattern }
            }
        }
        if let sender = crash.sender {
            let counted = crashes.filter { $0.sender == sender }
            verdict.senderCrashes = counted.count
            if settings.suspendAfter > 0, counted.count >= settings.suspendAfter, suspended[sender] == nil {
                var patterns: [PoisonPattern] = []
                for pattern in counted.compactMap(\.pattern) where !patterns.contains(pattern) { patterns.append(pattern) }
                suspended[sender] = Suspension(crashes: counted.count, since: crash.at, patterns: patterns)
                verdict.suspended = sender
                verdict.forgiven += forgive { $0.sender == sender }
            }
        }
        return verdict
    }

    /// Marks the crashes `matching` says as forgiven; returns those that were not already.
    private mutating func forgive(_ matching: (Crash) -> Bool) -> [Crash] {
        var forgiven: [Crash] = []
        for index in crashes.indices where !crashes[index].forgiven && matching(crashes[index]) {
            crashes[index].forgiven = true
            forgiven.append(crashes[index])
        }
        return forgiven
    }

    /// Whether `key` is suspended.
    func isSuspended(_ key: String) -> Bool { suspended[key] != nil }

    /// The patterns quarantined, sorted.
    var patterns: [PoisonPattern] { quarantined.keys.sorted() }

    /// Lifts the suspension of `key`, and forgets the crashes its events caused, so that the
    /// next one does not suspend it again at once. Whether it was suspended.
    mutating func lift(_ key: String) -> Bool {
        guard suspended.removeValue(forKey: key) != nil else { return false }
        crashes.removeAll { $0.sender == key }
        return true
    }

    /// Releases `pattern`, and forgets its crashes. Whether it was quarantined.
    mutating func release(_ pattern: PoisonPattern) -> Bool {
        guard quarantined.removeValue(forKey: pattern) != nil else { return false }
        crashes.removeAll { $0.pattern == pattern }
        return true
    }

    /// The listing for `poison`, ages as of `now`.
    func list(now: ContinuousClock.Instant) -> PoisonList {
        func age(_ since: ContinuousClock.Instant) -> Int64 { max(0, (now - since).wholeMilliseconds) }
        return PoisonList(
            suspended: suspended.sorted { $0.value.since < $1.value.since }.map {
                PoisonList.Suspension(key: $0.key, crashes: $0.value.crashes, ageMs: age($0.value.since), patterns: $0.value.patterns)
            },
            quarantined: quarantined.sorted { $0.value.since < $1.value.since }.map {
                PoisonList.Quarantine(type: $0.key.type, event: $0.key.event, crashes: $0.value.crashes, ageMs: age($0.value.since),
                                      addresses: $0.value.addresses)
            })
    }
}
