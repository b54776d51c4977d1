import GroveWire

extension TopologyDecoder {
    /// `machines[].onEnd`: `stay` when absent. `remove` frees a key, so it needs a keyed machine.
    /// - Parameter keyed: The machine's `keyed`, or nil when that was refused (then `remove` is
    ///   not judged: one problem at a time).
    mutating func decodeEndPolicy(in members: [String: JSONValue], at path: JSONPath, keyed: Bool?) -> EndPolicy? {
        let field = Field("onEnd", "\"restart\"", "what becomes of an instance that ends or fails")
        let policy = optionalChoice(
            field, in: members, at: path, default: EndPolicy.stay,
            meanings: [
                "stay": "it stays ended until an admin restarts it",
                "restart": "it starts again from its initial state, with backoff",
                "remove": "keyed machines: the instance is dropped and its key is free",
            ]
        )
        guard policy == .remove, keyed == false else { return policy }
        report(.invalidValue, path.appending(field.key), "onEnd \"remove\" frees an instance's key, and this machine is not keyed "
            + "(it has one instance, which would never come back); use \"restart\" to start it again, or set \"keyed\": true")
        return nil
    }
}

extension TopologyDecoder {
    static let restartExample = #"{ "intensity": 5, "periodMs": 10000, "backoff": { "initialMs": 100, "maxMs": 5000 } }"#

    /// `machines[].restart`: how an instance of a machine with `onEnd: "restart"` is restarted;
    /// the defaults when absent, refused beside another `onEnd` (it would do nothing there).
    /// - Parameter onEnd: The machine's `onEnd`, or nil when that was refused (then the two are
    ///   not judged together: one problem at a time).
    mutating func decodeRestartPolicy(in machine: [String: JSONValue], at machinePath: JSONPath, onEnd: EndPolicy?) -> RestartPolicy? {
        let defaults = RestartPolicy()
        guard let value = machine["restart"] else { return defaults }
        let path = machinePath.appending("restart")
        if let onEnd, onEnd != .restart {
            report(.invalidValue, path, "restart says how an instance is restarted, and this machine's onEnd is \"\(onEnd.rawValue)\", "
                + "so it is never restarted by its policy; set \"onEnd\": \"restart\", or remove restart")
            return nil
        }
        guard let members = members(of: value, at: path, known: TopologyKeys.machineRestart,
                                    what: "an object like \(Self.restartExample)") else { return nil }
        let intensity = optionalCount(
            Field("intensity", "5", "the ends allowed within periodMs; one more and the instance stays ended until an admin restarts it"),
            in: members, at: path, default: defaults.intensity, minimum: 0
        )
        let period = optionalCount(
            Field("periodMs", "10000", "the milliseconds over which ends are counted"),
            in: members, at: path, default: defaults.periodMs, minimum: 1
        )
        let backoff = decodeRestartBackoff(in: members, at: path)
        guard let intensity, let period, let backoff else { return nil }
        guard period <= Self.longestWaitMs else {
            report(.invalidValue, path.appending("periodMs"), "periodMs must be at most \(Self.longestWaitMs) (about 11.5 days), found \(period)")
            return nil
        }
        return RestartPolicy(intensity: intensity, periodMs: period, backoff: backoff)
    }

    /// The longest wait a topology may set in milliseconds, so that it fits a `Duration` and a
    /// timer: about 11.5 days.
    static let longestWaitMs = 1_000_000_000

    private mutating func decodeRestartBackoff(in restart: [String: JSONValue], at restartPath: JSONPath) -> RestartPolicy.Backoff? {
        let defaults = RestartPolicy.Backoff()
        guard let value = restart["backoff"] else { return defaults }
        let path = restartPath.appending("backoff")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.machineBackoff,
            what: #"an object like { "initialMs": 100, "maxMs": 5000 } (an instance that runs periodMs without ending waits initialMs again)"#
        ) else { return nil }
        let initial = optionalCount(
            Field("initialMs", "100", "the milliseconds before the restart after a first end"),
            in: members, at: path, default: defaults.initialMs, minimum: 0
        )
        let maximum = optionalCount(
            Field("maxMs", "5000", "the longest wait before a restart, in milliseconds"),
            in: members, at: path, default: defaults.maxMs, minimum: 0
        )
        guard let initial, let maximum else { return nil }
        for (key, number) in [("initialMs", initial), ("maxMs", maximum)] where number > Self.longestWaitMs {
            report(.invalidValue, path.appending(key), "\(key) must be at most \(Self.longestWaitMs) (about 11.5 days), found \(number)")
            return nil
        }
        guard maximum >= initial else {
            report(.invalidValue, path.appending("maxMs"),
                   "maxMs (\(maximum)) must be at least initialMs (\(initial)); the wait doubles from initialMs up to maxMs")
            return nil
        }
        return RestartPolicy.Backoff(initialMs: initial, maxMs: maximum)
    }
}
