import GroveCluster
import GroveWire

/// The case of an event, as patterns name it (``PoisonPattern``): Swift's synthesized `Codable`
/// writes `.add(5)` as `{"add":{"_0":5}}` and `.reset` as `{"reset":{}}`, an object with the
/// case as its one key; a `String` raw-value enum writes the string itself. Read from the JSON
/// its machine type encodes (never from what a client sent, which may spell the same event
/// other ways), so one event always has one case.
enum EventCase {
    /// The case `json` names: the one key of an object, or a string; nil for anything else
    /// (an event type with custom coding that writes several keys, say: it has no case, and
    /// its crashes are attributed to its sender alone).
    static func name(ofJSON json: [UInt8]) -> String? {
        var parser = LocatingJSONParser(json, document: "the event", maximumDepth: 512)
        guard let value = try? parser.parse() else { return nil }
        switch value {
        case .string(let name):
            return name
        case .object(let members) where members.count == 1:
            return members.keys.first
        case .object, .null, .bool, .number, .integer, .array:
            return nil
        }
    }
}
