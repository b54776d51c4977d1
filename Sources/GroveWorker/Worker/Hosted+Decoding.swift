import Grove
import GroveCluster
import GroveWire

extension Hosted {
    /// A JSON event that did not decode as `M.Event` (`failure` says why): a bare case name
    /// (`"login"`, short for `{"login":{}}`, a case without values) decodes; anything else is
    /// thrown as an error that says what is wrong and where, and how events are written.
    static func decodeBareCase(_ payload: [UInt8], failure error: WireError, address: String) throws(WireError) -> M.Event {
        // Our parser, not JSONValue's Decodable init: that one takes time cubic in the
        // nesting (0.65 s at 300 levels in a debug build), long enough to miss heartbeats.
        var parser = LocatingJSONParser(payload, document: "the event", emptyAdvice: "send a JSON event", maximumDepth: 512)
        let parsed = try? parser.parse()
        var failure = error
        failure.address = address
        switch parsed {
        case .string(let name)?:
            // A bare case name: fine for a case without associated values.
            let expanded = Array(#"{"\#(name)":{}}"#.utf8)
            do {
                return try WireJSON.decode(M.Event.self, from: expanded, what: "the event for \(address)")
            } catch {
                failure = Self.explain(error, name: name, address: address)
            }
        case .object(let members)? where members.count == 1:
            failure = Self.explain(error, name: members.keys.first!, address: address)
        case .object(let members)? where failure.path == "$":
            failure.message = "an event is an object with exactly one key, its case name; found "
                + (members.isEmpty ? "no keys" : "keys " + members.keys.sorted().joined(separator: ", "))
        case nil where failure.code == .malformedJSON:
            // Not JSON: say where, as fsm-send does (Foundation's parser names no position).
            var parser = LocatingJSONParser(payload, document: "the event", emptyAdvice: "send a JSON event", maximumDepth: 512)
            do {
                _ = try parser.parse()
            } catch {
                let position = error.position(multiline: payload.contains(UInt8(ascii: "\n")))
                failure.message = "the event for \(address) is not valid JSON: at \(position) (\(error.pathDescription)), \(error.message)"
                failure.path = error.pathDescription
            }
        case .object?, nil, .null?, .bool?, .number?, .integer?, .array?:
            break
        }
        if failure.message.hasSuffix(".") { failure.message.removeLast() }
        failure.message += ". Events are JSON as Swift's Codable encodes \(M.Event.self): {\"caseName\":{\"label\":value}}, "
            + "{\"caseName\":{\"_0\":value}} for unlabelled values, or \"caseName\" for a case without values"
        throw failure
    }

    /// What went wrong with `{"name": ...}`: an unknown case, or a known case whose values are
    /// missing, of the wrong type or out of their type's range (the message names the case and
    /// the path, `add._0`).
    static func explain(_ error: WireError, name: String, address: String) -> WireError {
        var explained = error
        explained.address = address
        let finding = error.message.replacingOccurrences(of: "the event for \(address) ", with: "")
        if error.path == "$" {
            // Swift's synthesized `init(from:)` of an enum finds no key it knows: "Invalid
            // number of keys found, expected one". Anything else at the top (a type's own
            // `init(from:)` refusing) is said as it was, not taken for an unknown case.
            explained.message = error.message.contains("Invalid number of keys")
                ? "'\(name)' is not a case of \(M.self).Event"
                : "'\(name)' does not decode as \(M.self).Event: \(finding)"
        } else if error.message.contains("is missing key") {
            explained.message = "'\(name)' needs its values: " + finding
        } else {
            explained.message = "'\(name)' " + finding
        }
        return explained
    }
}
