import Foundation
@testable import GroveCluster
import GroveWire

extension ConformanceProbe {
    /// A value tried at one key (`nil`: the key removed), and why it is tried.
    struct Trial {
        var value: JSONValue?
        var why: String
    }

    /// One JSON value of each type: each is refused unless the schema's type allows it.
    static let palette: [(JSONValue, String)] = [
        (.null, "null"), (.bool(true), "a boolean"), (.integer(0), "an integer"), (.number(0.5), "a fraction"),
        (.string(""), "an empty string"), (.array([]), "an empty array"), (.object([:]), "an empty object"),
    ]

    /// A large whole number, tried where the schema states no maximum, to find one the decoder keeps.
    static let large: Int64 = 1_000_000_000_000

    /// Values to try at a property whose schema is `schema` and whose value in the base is
    /// `current`: the base's own, one of each JSON type, each enum value and one not listed, each
    /// bound and one past it, the default, the examples, a pattern broken, and for an array each
    /// of these as its single item.
    func trials(_ schema: [String: JSONValue], current: JSONValue?) -> [Trial] {
        var trials: [Trial] = current.map { [Trial(value: $0, why: "the base's value")] } ?? []
        trials += Self.palette.map { Trial(value: $0.0, why: $0.1) }
        if case .array(let choices)? = schema["enum"] {
            trials += choices.map { Trial(value: $0, why: "listed in enum") }
            trials.append(Trial(value: .string("zz-not-listed"), why: "not listed in enum"))
        }
        let integer = schema["type"] == .string("integer")
        func bound(_ name: String, _ offset: Int64, _ why: String) {
            guard case .integer(let bound)? = schema[name] else { return }
            trials.append(Trial(value: .integer(bound), why: "at \(name)"))
            trials.append(Trial(value: .integer(bound + offset), why: why))
        }
        bound("minimum", -1, "below minimum")
        bound("maximum", 1, "above maximum")
        bound("exclusiveMinimum", 1, "just above exclusiveMinimum")
        if integer, schema["maximum"] == nil { trials.append(Trial(value: .integer(Self.large), why: "large")) }
        if let fallback = schema["default"] { trials.append(Trial(value: fallback, why: "the default")) }
        if case .array(let examples)? = schema["examples"] { trials += examples.map { Trial(value: $0, why: "an example") } }
        if schema["pattern"] != nil, case .string(let text)? = current {
            trials.append(Trial(value: .string("/" + text), why: "a '/' before the base's value"))
            trials.append(Trial(value: .string(text + "/"), why: "a '/' after the base's value"))
        }
        if let items = schema["items"] {
            let first: JSONValue? = if case .array(let elements)? = current { elements.first } else { nil }
            trials += self.trials(validator.resolved(items), current: first).compactMap { item in
                item.value.map { Trial(value: .array([$0]), why: "one item: \(item.why)") }
            }
            if schema["uniqueItems"] == .bool(true), let first {
                trials.append(Trial(value: .array([first, first]), why: "an item twice"))
            }
        }
        var unique: [Trial] = [Trial(value: nil, why: "removed")]
        for trial in trials where !unique.contains(where: { $0.value.map { Self.identical($0, trial.value!) } ?? false }) {
            unique.append(trial)
        }
        return unique
    }

    /// Equal and of the same JSON spelling (`0.5` and `"0.5"` differ; so do `1` and `1.0`).
    static func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
        a == b && "\(a)" == "\(b)"
    }

    /// `document` with what the decoder's cross-field rules need beside `value` at `key` of the
    /// object at `host`: rules between two values, which the schema cannot state.
    func withCompanions(_ place: String, _ value: JSONValue?, host: [Step], in document: JSONValue) -> JSONValue {
        var document = document
        func set(_ key: String, _ value: JSONValue?) { document = Self.setting(value, at: host + [.key(key)], in: document) }
        let number: Int64? = if case .integer(let number)? = value { number } else { nil }
        let plenty = JSONValue.integer(1 << 50)
        switch place {
        case "$.heartbeat.intervalMs":   // timeoutMs > intervalMs
            if let number { set("timeoutMs", .integer(number + 1)) }
        case "$.heartbeat.timeoutMs":
            set("intervalMs", .integer(1))
        case "$.workers[].supervision.backoff.initialMs", "$.machines[].restart.backoff.initialMs":   // maxMs >= initialMs
            set("maxMs", .integer(1_000_000_000))
        case "$.workers[].supervision.backoff.maxMs", "$.machines[].restart.backoff.maxMs":
            set("initialMs", .integer(0))
        case "$.limits.payloadBytes", "$.limits.addressBytes":   // messageBytes >= payloadBytes + addressBytes + 15
            set("messageBytes", plenty)
        case "$.limits.messageBytes":
            set("payloadBytes", .integer(1))
            set("addressBytes", .integer(1))
        case "$.limits.owedBytes":   // owedBytesPerClient <= owedBytes
            set("owedBytesPerClient", .integer(1))
        case "$.limits.owedBytesPerClient":
            set("owedBytes", plenty)
        case "$.limits.subscriptions":   // watcherSubscriptions <= subscriptions
            set("watcherSubscriptions", .integer(1))
        case "$.limits.watcherSubscriptions":
            set("subscriptions", plenty)
        case "$.machines":   // routes and io name machines
            document = Self.setting(nil, at: [.key("routes")], in: document)
            document = Self.setting(nil, at: [.key("io")], in: document)
        case "$.workers[].name":   // machines and io name their worker group
            guard case .string = value else { break }
            for section in ["machines", "io"] {
                guard case .array(let elements)? = document.objectValue?[section] else { continue }
                for index in elements.indices {
                    document = Self.setting(value, at: [.key(section), .index(index), .key("worker")], in: document)
                }
            }
        default:
            break
        }
        return document
    }

    /// Probes `key` of the object at `place`; a line for each disagreement.
    func check(_ key: String, at place: Place) -> [String] {
        let instances = instances(of: place.name)
        guard let host = instances.first(where: { Self.value(at: $0 + [.key(key)], in: base) != nil }) ?? instances.first,
              let schema = place.properties[key] else { return [] }
        let steps = host + [.key(key)]
        let path = Self.describe(steps)
        let name = place.name + "." + key
        var disagreements: [String] = []
        var accepted: [(effective: JSONValue?, topology: Topology, label: String)] = []
        for trial in trials(schema, current: Self.value(at: steps, in: base)) {
            if Self.unprobed["\(name)=\(trial.why)"] != nil { continue }
            let effective = (trial.value ?? schema["default"]).map { filled($0, schema) }
            var document = Self.setting(trial.value, at: steps[...], in: base)
            document = withCompanions(name, trial.value ?? schema["default"], host: host, in: document)
            let verdict = verdict(on: document)
            let shown = trial.value.map { "\($0)" } ?? "(removed)"
            let label = "\(name) at \(path) = \(shown) (\(trial.why))"
            if verdict.schema.isEmpty != (verdict.decoded != nil) {
                disagreements.append("\(label): \(verdict)")
            } else if let topology = verdict.decoded {
                accepted.append((effective, topology, label))
            } else if verdict.schema.contains(where: { Self.path($0.path, isAtOrUnder: path) }),
                      !verdict.issues.contains(where: { Self.path($0.path, isAtOrUnder: path) }) {
                disagreements.append("\(label): both refuse, but the decoder names no issue at \(path): \(verdict)")
            }
        }
        guard !Self.ignored.contains(name) else { return disagreements }
        for (index, first) in accepted.enumerated() {
            for second in accepted[(index + 1)...] where (first.effective == second.effective) != (first.topology == second.topology) {
                let why = first.effective == second.effective
                    ? "equal once the schema's defaults are filled in, yet they decode differently: the decoder's default is not the schema's"
                    : "different values decode to the same topology: the schema states no default, or another, or the decoder ignores the key"
                disagreements.append("\(first.label) and \(second.label): \(why)")
            }
        }
        return disagreements
    }

    /// An unknown key in the object at `place` is refused by both, the decoder naming it.
    func checkUnknownKey(at place: Place) -> [String] {
        guard let host = instances(of: place.name).first else { return [] }
        let steps = host + [.key("zzUnknown")]
        let verdict = verdict(on: Self.setting(.integer(1), at: steps[...], in: base))
        let path = Self.describe(steps)
        guard verdict.schema.isEmpty == (verdict.decoded != nil) else { return ["\(place.name).zzUnknown at \(path) = 1 (an unknown key): \(verdict)"] }
        guard verdict.issues.contains(where: { $0.path == path && $0.code == .unknownKey }) || verdict.decoded != nil else {
            return ["\(place.name).zzUnknown at \(path) = 1 (an unknown key): the decoder names no unknown key there: \(verdict)"]
        }
        return []
    }

    static func value(at steps: [Step], in document: JSONValue) -> JSONValue? {
        steps.reduce(Optional(document)) { value, step in
            switch (step, value) {
            case (.key(let key), .object(let members)?): members[key]
            case (.index(let index), .array(let elements)?) where elements.indices.contains(index): elements[index]
            case (.key, _), (.index, _): nil
            }
        }
    }

    static func path(_ path: String, isAtOrUnder parent: String) -> Bool {
        path == parent || path.hasPrefix(parent + ".") || path.hasPrefix(parent + "[")
    }
}
