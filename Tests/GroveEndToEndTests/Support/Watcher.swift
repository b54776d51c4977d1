import Foundation
import GroveWire
import Synchronization

/// One line of `fsm-send watch`: `{"topic","kind","address","payload","sequence"}`, or a
/// `gap` line's `{"topic","kind","missed"}`.
struct WatchEvent: CustomStringConvertible {
    var topic: String
    var kind: String
    var address: String
    var payload: JSONValue
    /// The publication's number on its topic (a snapshot line's: the number its state stands at).
    var sequence: Int?
    /// A `gap` line's count of missed publications.
    var missed: Int?

    init?(line: String) {
        guard let value = try? JSONValue(parsing: Data(line.utf8)), let members = value.objectValue,
              let topic = members["topic"]?.stringValue, let kind = members["kind"]?.stringValue else { return nil }
        self.topic = topic
        self.kind = kind
        self.address = members["address"]?.stringValue ?? ""
        self.payload = members["payload"] ?? .null
        self.sequence = members["sequence"].flatMap(Self.integer)
        self.missed = members["missed"].flatMap(Self.integer)
    }

    private static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .integer(let number): Int(number)
        case .number(let number): Int(exactly: number)
        case .null, .bool, .string, .array, .object: nil
        }
    }

    /// `phase` of an effect or worker event.
    var phase: String? { payload.objectValue?["phase"]?.stringValue }
    /// The effect id of an effect event.
    var effect: JSONValue? { payload.objectValue?["effect"] }
    /// The worker named in the payload: the one running an effect, or the one a state came from.
    var worker: String? { payload.objectValue?["worker"]?.stringValue }
    /// The committed state of a state change (or of a snapshot line).
    var state: JSONValue? { kind == "state-changed" || kind == "snapshot" ? payload.objectValue?["state"] : nil }
    var reason: String? { payload.objectValue?["reason"]?.stringValue }

    /// An effect event of `address` in `phase`, for the effect `id` when given.
    func isEffect(_ address: String, _ phase: String, id: String? = nil) -> Bool {
        topic == "effect:" + address && self.phase == phase && (id == nil || effect == .string(id!))
    }

    func isWorker(_ name: String, _ phase: String) -> Bool {
        topic == "worker:" + name && self.phase == phase
    }

    var description: String { "\(topic) \(kind) \(payload)" }
}

/// `fsm-send watch` running in the background; its lines are collected in a file and read back
/// on demand.
final class EventWatcher: Sendable {
    let process: ChildProcess

    init(process: ChildProcess) { self.process = process }

    /// Every complete line printed so far, parsed.
    var events: [WatchEvent] {
        let text = process.stdout
        guard let end = text.lastIndex(of: "\n") else { return [] }
        return text[..<end].split(separator: "\n").compactMap { WatchEvent(line: String($0)) }
    }

    /// Events matching `predicate`.
    func events(where predicate: (WatchEvent) -> Bool) -> [WatchEvent] { events.filter(predicate) }

    /// Waits until at least `count` events match `predicate`.
    /// - Returns: The matching events so far.
    @discardableResult
    func waitFor(
        _ what: String, count: Int = 1, timeout: Duration = .seconds(15), where predicate: @escaping (WatchEvent) -> Bool
    ) async throws -> [WatchEvent] {
        do {
            return try await eventually("\(count)× \(what) on the watch stream", timeout: timeout) {
                let matching = events.filter(predicate)
                return matching.count >= count ? matching : nil
            }
        } catch let error as HarnessError {
            let seen = events.suffix(30).map(\.description).joined(separator: "\n  ")
            throw HarnessError("\(error.description); last events:\n  \(seen)")
        }
    }

    /// The effect events of `address`, optionally only those in `phase` or of effect `id`.
    ///
    /// Tests call helpers like this one instead of writing closures inside `#expect`: Swift 6.3
    /// can give a closure inside a macro expansion the same discriminator as a closure after
    /// it, and then runs the wrong closure (seen here: a `filter` ran an earlier `#expect`'s
    /// `allSatisfy` predicate).
    func effects(of address: String, _ phase: String? = nil, id: String? = nil) -> [WatchEvent] {
        var found: [WatchEvent] = []
        for event in events where event.topic == "effect:" + address {
            if let phase, event.phase != phase { continue }
            if let id, event.effect != .string(id) { continue }
            found.append(event)
        }
        return found
    }

    /// The phases of `address`'s effect events, in order.
    func phases(of address: String) -> [String] {
        effects(of: address).compactMap(\.phase)
    }

    /// The outputs `address` emitted.
    func outputs(of address: String) -> [WatchEvent] {
        var found: [WatchEvent] = []
        for event in events where event.topic == "output:" + address { found.append(event) }
        return found
    }

    /// The states `address` committed, in order, as published.
    func states(of address: String) -> [JSONValue] {
        events.filter { $0.topic == "state:" + address }.compactMap(\.state)
    }
}

extension Cluster {
    /// Puts a mark into the watch stream: bumps the probe counter and waits until the watcher
    /// prints that change. Everything the coordinator published before the probe's change comes
    /// before the mark.
    /// - Returns: The number of events the watcher had printed up to and including the mark.
    func mark(_ watcher: EventWatcher) async throws -> Int {
        let count = try await send(TopologyFile.probe, "increment")
        let topic = "state:" + TopologyFile.probe
        return try await eventually("the probe mark on the watch stream") { () -> Int? in
            let events = watcher.events
            guard let index = events.firstIndex(where: { $0.topic == topic && $0.state == count }) else { return nil }
            return index + 1
        }
    }
}

extension EventWatcher {
    /// Events printed after a mark from ``Cluster/mark(_:)``.
    func events(after mark: Int) -> [WatchEvent] { Array(events.dropFirst(mark)) }

    /// The state changes and effect events of `address` printed after a mark.
    func events(after mark: Int, of address: String) -> [WatchEvent] {
        var found: [WatchEvent] = []
        for event in events(after: mark) where event.address == address {
            found.append(event)
        }
        return found
    }
}
