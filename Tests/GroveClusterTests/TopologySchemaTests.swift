import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// docs/topology.schema.json, parsed.
private func schema() throws -> [String: Any] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/topology.schema.json")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    return try #require(object as? [String: Any], "the schema is a JSON object")
}

/// Every object schema below `node`, by its place in a topology (`$.workers[]`), with `$ref`s
/// to `#/$defs/...` followed.
private func objects(in node: [String: Any], at place: String, defs: [String: Any]) -> [String: [String: Any]] {
    var node = node
    if let reference = node["$ref"] as? String, reference.hasPrefix("#/$defs/"),
       let target = defs[String(reference.dropFirst("#/$defs/".count))] as? [String: Any] {
        node = target.merging(node.filter { $0.key != "$ref" }) { _, own in own }
    }
    var found: [String: [String: Any]] = [:]
    if let items = node["items"] as? [String: Any] {
        found.merge(objects(in: items, at: place + "[]", defs: defs)) { first, _ in first }
    }
    if let properties = node["properties"] as? [String: Any] {
        found[place] = properties
        for (key, value) in properties {
            guard let child = value as? [String: Any] else { continue }
            found.merge(objects(in: child, at: place + "." + key, defs: defs)) { first, _ in first }
        }
    }
    return found
}

@Suite("Topology schema", .timeLimit(.minutes(2)))
struct TopologySchemaTests {
    @Test func theSchemaDescribesExactlyTheKeysTheDecoderReads() throws {
        let root = try schema()
        let found = objects(in: root, at: "$", defs: root["$defs"] as? [String: Any] ?? [:])
        #expect(Set(found.keys) == Set(TopologyKeys.byPlace.keys), "objects in the schema and in TopologyKeys differ")
        for (place, keys) in TopologyKeys.byPlace {
            let described = Set(found[place]?.keys.filter { $0 != "$schema" } ?? [])
            #expect(described == Set(keys), "\(place): the schema has \(described.sorted()), the decoder reads \(keys.sorted())")
        }
    }

    /// The conformance probes try the values the schema lists; a case the model gains and the
    /// schema does not list is seen here.
    @Test func theSchemasEnumsListTheModelsCases() throws {
        let root = try schema()
        let found = objects(in: root, at: "$", defs: root["$defs"] as? [String: Any] ?? [:])
        func choices(_ place: String, _ key: String) -> [String]? {
            var property = found[place]?[key] as? [String: Any]
            if let items = property?["items"] as? [String: Any] { property = items }
            return property?["enum"] as? [String]
        }
        let expected: [(String, String, [String])] = [
            ("$.workers[].supervision", "onGiveUp", Topology.Supervision.GiveUp.allCases.map(\.rawValue)),
            ("$.machines[]", "durability", Durability.allCases.map(\.rawValue)),
            ("$.machines[]", "onEnd", EndPolicy.allCases.map(\.rawValue)),
            ("$.durability", "flush", DurabilityFlush.allCases.map(\.rawValue)),
            ("$.audit", "flush", DurabilityFlush.allCases.map(\.rawValue)),
            ("$.security.clients[]", "roles", Topology.Role.allCases.map(\.rawValue)),
        ]
        for (place, key, cases) in expected {
            #expect(choices(place, key).map(Set.init) == Set(cases), "\(place).\(key): the schema lists \(choices(place, key) ?? []), the model has \(cases)")
        }
    }
}
