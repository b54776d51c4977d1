import GroveWire

extension TopologyDecoder {
    static let poisonExample = #"{ "quarantineAfter": 2, "suspendAfter": 2, "periodMs": 600000 }"#

    /// `"poison"`: when crashes quarantine an event pattern and suspend a client key; defaults
    /// when absent.
    mutating func decodePoisonSettings(in root: [String: JSONValue]) -> Topology.PoisonSettings? {
        let defaults = Topology.PoisonSettings()
        guard let value = root["poison"] else { return defaults }
        let path = JSONPath.root.appending("poison")
        guard let members = members(of: value, at: path, known: TopologyKeys.poison, what: "an object like \(Self.poisonExample)") else {
            return nil
        }
        let range = Topology.PoisonSettings.crashesRange
        func crashes(_ field: Field, default fallback: Int) -> Int? {
            guard let count = optionalCount(field, in: members, at: path, default: fallback, minimum: range.lowerBound) else { return nil }
            guard count <= range.upperBound else {
                report(.invalidValue, path.appending(field.key), "\(field.key) must be at most \(range.upperBound), found \(count); \(field.hint)")
                return nil
            }
            return count
        }
        let quarantineAfter = crashes(Field("quarantineAfter", "2",
            "the worker crashes of one machine type and event case that quarantine it for every address; 0: never"),
            default: defaults.quarantineAfter)
        let suspendAfter = crashes(Field("suspendAfter", "2",
            "the worker crashes caused by one client key's events that suspend the key; 0: never"),
            default: defaults.suspendAfter)
        let periodMs = optionalCount(Field("periodMs", "600000", "the milliseconds a crash counts for"),
                                     in: members, at: path, default: defaults.periodMs, minimum: 1)
        guard let quarantineAfter, let suspendAfter, let periodMs else { return nil }
        return Topology.PoisonSettings(quarantineAfter: quarantineAfter, suspendAfter: suspendAfter, periodMs: periodMs)
    }
}
