import GroveWire

extension TopologyDecoder {
    static let supervisionExample = #"{ "intensity": 5, "periodMs": 10000, "onGiveUp": "escalate" }"#

    /// A worker group's `supervision`: the defaults when absent; `nil` after reporting.
    mutating func decodeSupervision(in group: [String: JSONValue], at groupPath: JSONPath, external: Bool?) -> Topology.Supervision? {
        let defaults = Topology.Supervision()
        guard let value = group["supervision"] else { return defaults }
        let path = groupPath.appending("supervision")
        if external == true {
            report(.invalidValue, path, "an external group is started by hand and fsm-launch never restarts it; remove supervision, or remove \"external\": true")
            return nil
        }
        guard let members = members(
            of: value, at: path, known: TopologyKeys.supervision,
            what: "an object like \(Self.supervisionExample)"
        ) else { return nil }
        let intensity = optionalCount(
            Field("intensity", "5", "the exits allowed within periodMs before the group gives up"),
            in: members, at: path, default: defaults.intensity, minimum: 0
        )
        let period = optionalCount(
            Field("periodMs", "10000", "the milliseconds over which exits are counted"),
            in: members, at: path, default: defaults.periodMs, minimum: 1
        )
        let backoff = decodeBackoff(in: members, at: path)
        let finalCodes = decodeExitCodes(in: members, at: path, default: defaults.finalExitCodes)
        let onGiveUp = decodeGiveUp(in: members, at: path, default: defaults.onGiveUp)
        guard let intensity, let period, let backoff, let finalCodes, let onGiveUp else { return nil }
        return Topology.Supervision(intensity: intensity, periodMs: period, backoff: backoff,
                                    finalExitCodes: finalCodes, onGiveUp: onGiveUp)
    }

    private mutating func decodeBackoff(in supervision: [String: JSONValue], at supervisionPath: JSONPath) -> Topology.Supervision.Backoff? {
        let defaults = Topology.Supervision.Backoff()
        guard let value = supervision["backoff"] else { return defaults }
        let path = supervisionPath.appending("backoff")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.backoff,
            what: #"an object like { "initialMs": 100, "maxMs": 5000, "resetAfterMs": 10000 }"#
        ) else { return nil }
        let initial = optionalCount(
            Field("initialMs", "100", "the milliseconds before the first restart"),
            in: members, at: path, default: defaults.initialMs, minimum: 0
        )
        let maximum = optionalCount(
            Field("maxMs", "5000", "the longest wait between restarts, in milliseconds"),
            in: members, at: path, default: defaults.maxMs, minimum: 0
        )
        let reset = optionalCount(
            Field("resetAfterMs", "10000", "how long a worker must run for the wait to start over"),
            in: members, at: path, default: defaults.resetAfterMs, minimum: 0
        )
        guard let initial, let maximum, let reset else { return nil }
        // Bounded so that a wait always fits a Duration and a timer: about 11.5 days.
        let limit = 1_000_000_000
        for (key, number) in [("initialMs", initial), ("maxMs", maximum), ("resetAfterMs", reset)] where number > limit {
            report(.invalidValue, path.appending(key), "\(key) must be at most \(limit) (about 11.5 days), found \(number)")
            return nil
        }
        guard maximum >= initial else {
            report(.invalidValue, path.appending("maxMs"), "maxMs (\(maximum)) must be at least initialMs (\(initial)); the wait doubles from initialMs up to maxMs")
            return nil
        }
        return Topology.Supervision.Backoff(initialMs: initial, maxMs: maximum, resetAfterMs: reset)
    }

    private mutating func decodeExitCodes(in members: [String: JSONValue], at path: JSONPath, default fallback: [Int32]) -> [Int32]? {
        let field = Field("finalExitCodes", "\(WorkerExitStatus.final)", "exit statuses after which a worker is not restarted")
        guard members[field.key] != nil else { return fallback }
        var codes: [Int32] = []
        var valid = true
        for (elementPath, value) in elements(field, in: members, at: path, required: false) {
            let number: Double? = switch value {
            case .integer(let value): Double(value)
            case .number(let value): value
            case .null, .bool, .string, .array, .object: nil
            }
            guard let number, number.rounded() == number, (0...255).contains(number) else {
                report(.invalidValue, elementPath, "expected an exit status, a whole number from 0 to 255, found \(Self.describe(value)); \(field.hint)")
                valid = false
                continue
            }
            codes.append(Int32(number))
        }
        if case .array = members[field.key] {} else { valid = false }
        return valid ? codes : nil
    }

    private mutating func decodeGiveUp(
        in members: [String: JSONValue], at path: JSONPath, default fallback: Topology.Supervision.GiveUp
    ) -> Topology.Supervision.GiveUp? {
        let field = Field("onGiveUp", "\"escalate\"", "what giving up on a worker means: \"escalate\" or \"stay-down\"")
        guard let value = members[field.key] else { return fallback }
        guard let text = text(value, field, at: path.appending(field.key)) else { return nil }
        guard let choice = Topology.Supervision.GiveUp(rawValue: text) else {
            let known = Topology.Supervision.GiveUp.allCases.map(\.rawValue)
            let guess = Self.closest(to: text, among: known).map { "did you mean '\($0)'? " } ?? ""
            report(.invalidValue, path.appending(field.key), "unknown onGiveUp '\(text)'; \(guess)use \"escalate\" (fsm-launch stops everything and exits non-zero) or \"stay-down\" (the worker stays down, the rest keeps running)")
            return nil
        }
        return choice
    }
}
