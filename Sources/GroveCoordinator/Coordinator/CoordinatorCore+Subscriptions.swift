import GroveCluster
import GroveWire

/// Who made each topic prefix the events endpoint filters on, and how many each watcher's key
/// made: the accounts behind `limits.watcherSubscriptions` and `limits.subscriptions`.
///
/// libzmq's XPUB keeps every subscription of every connection in its own trie (about 46 bytes
/// per byte of a distinct prefix) before the coordinator hears of it, and offers no way to drop
/// one connection's. It does say who asked: with CURVE each subscription carries the watcher's
/// `User-Id` (its key), and it reports a prefix only when it is new (the first connection to ask
/// for it) and again when the last connection holding it lets go (then without a `User-Id`).
/// So the coordinator counts each distinct prefix against the key that made it, and enforces
/// the bounds the only way libzmq allows: by resetting the events endpoint's connections,
/// which frees their subscriptions (the others reconnect and subscribe again by themselves).
struct WatcherAccounts {
    /// The key (Z85) that made each prefix; absent for a prefix a trusted peer made.
    private(set) var owners: [String: String] = [:]
    /// The prefixes each key made and that are still held.
    private(set) var made: [String: Int] = [:]
    /// Keys refused on the events endpoint for going past `limits.watcherSubscriptions`.
    private(set) var refused: Set<String> = []
    /// The connections were reset for `limits.subscriptions` and libzmq has not yet said that
    /// enough prefixes went: what its queue still holds from them is not observed, and does not
    /// reset them again.
    var resetting = false

    /// Counts `prefix`, new to the XPUB, against `owner`.
    mutating func add(_ prefix: String, owner: String?) {
        guard let owner else { return }
        owners[prefix] = owner
        made[owner, default: 0] += 1
    }

    /// Forgets `prefix`: no connection holds it any more.
    mutating func remove(_ prefix: String) {
        guard let owner = owners.removeValue(forKey: prefix) else { return }
        made[owner, default: 1] -= 1
        if made[owner] == 0 { made[owner] = nil }
    }

    mutating func refuse(_ key: String) { refused.insert(key) }

    /// Admits `key` again; `false` when it was not refused.
    mutating func lift(_ key: String) -> Bool { refused.remove(key) != nil }
}

extension CoordinatorCore {
    /// A subscription message from the events XPUB: byte 1 (subscribe) or 0 (unsubscribe), then
    /// the prefix. Workers learn the new set, so they publish state changes only when watched.
    ///
    /// Past a bound (a prefix longer than any topic, more than `limits.watcherSubscriptions`
    /// prefixes made by one key, more than `limits.subscriptions` in all) the prefix is not
    /// observed and every connection to the events endpoint is reset, which is how libzmq lets
    /// go of what it holds for them; a key past its own bound is refused on the events endpoint
    /// from then on, until an admin lifts it (`poison` lift, as a suspension) or the coordinator
    /// restarts.
    /// - Parameter userID: The `User-Id` the message carried (the watcher's key, with CURVE);
    ///   `nil` for an unsubscription libzmq makes when a connection closes.
    mutating func subscription(_ frame: [UInt8], from userID: String? = nil) -> [CoordinatorAction] {
        guard let flag = frame.first, flag <= 1 else { return [] }
        let prefix = String(decoding: frame.dropFirst(), as: UTF8.self)
        let limits = topology.limits
        guard flag == 1 else {
            watchers.remove(prefix)
            guard subscriptions.remove(prefix) != nil else { return [] }
            if subscriptions.count < limits.subscriptions { watchers.resetting = false }
            publications.forgetStates(uncoveredBy: subscriptions)
            return observeAll()
        }
        guard !subscriptions.contains(prefix) else { return [] }
        // The watcher's key; a trusted peer (ipc of the launching user, or insecure tcp) has none.
        let owner = userID.flatMap { $0 == Gatekeeper.trustedUser ? nil : String($0.prefix(40)) }
        // What libzmq had queued from a refused key's connections before they were reset: not
        // observed, and no cause for another reset.
        if let owner, watchers.refused.contains(owner) { return [] }
        let who = owner.map { "the watcher with key \($0)" } ?? "a trusted watcher"
        if frame.count - 1 > limits.subscriptionBytes {
            return resetWatchers(refusing: owner, "\(who) subscribed to a prefix of \(frame.count - 1) bytes, longer than any topic "
                                 + "(limits.addressBytes \(limits.addressBytes) and the topic's kind)")
        }
        if let owner, watchers.made[owner, default: 0] >= limits.watcherSubscriptions {
            return resetWatchers(refusing: owner, "\(who) subscribed to more than limits.watcherSubscriptions "
                                 + "(\(limits.watcherSubscriptions)) distinct prefixes")
        }
        if subscriptions.count >= limits.subscriptions {
            guard !watchers.resetting else { return [] }
            watchers.resetting = true
            return resetWatchers(refusing: nil, "the watchers subscribed to more than limits.subscriptions (\(limits.subscriptions)) "
                                 + "distinct prefixes in all (the last by \(who))")
        }
        subscriptions.insert(prefix)
        watchers.add(prefix, owner: owner)
        return observeAll()
    }

    /// Every registered worker told the prefixes watched now.
    private func observeAll() -> [CoordinatorAction] {
        workers.values.filter(\.registered).map(\.name).sorted().map(observe(for:))
    }

    /// The events endpoint's connections reset, and `key` refused on it from now on.
    private mutating func resetWatchers(refusing key: String?, _ why: String) -> [CoordinatorAction] {
        let refusal = key.map { key -> String in
            watchers.refuse(key)
            return "; key \(key) is refused on the events endpoint until an admin lifts it (fsm-send suspensions lift '\(key)')"
        } ?? ""
        return [.resetWatchers(refusing: key),
                .warn("\(why): every connection to the events endpoint is reset, which frees their subscriptions; "
                      + "watchers reconnect and subscribe again\(refusal). Raise the limit in the topology's limits if this is expected")]
    }
}
