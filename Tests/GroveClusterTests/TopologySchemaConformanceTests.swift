import Foundation
@testable import GroveCluster
import GroveWire
import Testing

/// docs/topology.schema.json made executable against the decoder: every property of every object,
/// at its place (`$.workers[].supervision.backoff`), is set to values drawn from the schema (its
/// type and others, enum values and one not listed, bounds and one past each, defaults, examples)
/// and removed, in an otherwise valid topology; the schema (``SchemaValidator``) and the decoder
/// must give each document the same verdict, and accepted documents must decode to equal
/// topologies exactly when their values are equal once the schema's defaults are filled in. So a
/// type, enum, bound, required key or default changed on one side only fails here.
@Suite("Topology schema conformance", .timeLimit(.minutes(2)))
struct TopologySchemaConformanceTests {
    @Test func theSchemaUsesOnlyKeywordsTheValidatorApplies() throws {
        #expect(try ConformanceProbe.make().validator.unknownKeywords() == [])
    }

    @Test func theBaseHoldsEveryPlaceAndBothAcceptIt() throws {
        let probe = try ConformanceProbe.make()
        for place in probe.places {
            #expect(!probe.instances(of: place.name).isEmpty, "the base document has no \(place.name); add one to ConformanceProbe.base")
        }
        let verdict = probe.verdict(on: probe.base)
        #expect(verdict.schema.isEmpty && verdict.decoded != nil, "the base is refused: \(verdict)")
    }

    @Test func theSchemaAndTheDecoderAgreeOnEveryProbe() throws {
        let probe = try ConformanceProbe.make()
        var disagreements: [String] = []
        for place in probe.places {
            disagreements += probe.checkUnknownKey(at: place)
            for key in place.properties.keys.sorted() {
                disagreements += probe.check(key, at: place)
            }
        }
        for disagreement in disagreements { Issue.record(Comment(rawValue: disagreement)) }
    }

    @Test(arguments: ["Topologies", "docs/examples"])
    func everyShippedTopologyIsValidForBoth(folder: String) throws {
        let probe = try ConformanceProbe.make()
        let directory = ConformanceProbe.repository.appendingPathComponent(folder)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(!files.isEmpty)
        for file in files {
            let data = try Data(contentsOf: directory.appendingPathComponent(file))
            let document = try JSONDecoder().decode(JSONValue.self, from: data)
            #expect(probe.validator.failures(of: document).isEmpty, "\(folder)/\(file): \(probe.validator.failures(of: document))")
            #expect(throws: Never.self, "\(folder)/\(file)") { try Topology(json: data, source: file, environment: ConformanceProbe.environment) }
        }
    }
}

/// The schema's objects, a valid base topology holding each, and the probes.
struct ConformanceProbe {
    /// An object of the schema at its place in a topology, with its properties' schemas resolved.
    struct Place {
        var name: String
        var schema: [String: JSONValue]
        var properties: [String: [String: JSONValue]]
    }

    enum Step: Equatable {
        case key(String)
        case index(Int)
    }

    struct Verdict: CustomStringConvertible {
        var schema: [SchemaValidator.Failure]
        var decoded: Topology?
        var issues: [TopologyIssue]

        var description: String {
            let schemaSide = schema.isEmpty ? "schema accepts" : "schema refuses (\(schema.map(\.description).joined(separator: "; ")))"
            let decoderSide = decoded != nil ? "decoder accepts" : "decoder refuses (\(issues.map(\.description).joined(separator: "; ")))"
            return "\(schemaSide); \(decoderSide)"
        }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let environment = ["GROVE_RUNTIME_DIR": "/tmp/grove-probe-runtime"]

    /// Valid, with every object of the schema, and values other than the defaults so that a
    /// default differs from what is written. Its names are the ones the schema's examples use.
    static let baseText = #"""
    {
      "$schema": "../docs/topology.schema.json",
      "name": "probe",
      "coordinator": { "clients": "ipc:///tmp/grove-probe/c", "workers": "ipc:///tmp/grove-probe/w", "events": "ipc:///tmp/grove-probe/e" },
      "workers": [
        { "name": "main", "count": 2, "executable": "./probe-worker", "arguments": ["--verbose"],
          "supervision": { "intensity": 3, "periodMs": 2000, "backoff": { "initialMs": 10, "maxMs": 20, "resetAfterMs": 30 },
                           "finalExitCodes": [2], "onGiveUp": "stay-down" } },
        { "name": "remote", "external": true, "key": "keys/remote.key" }
      ],
      "machines": [
        { "name": "auth", "type": "AuthFlow", "worker": "main", "keyed": false, "durability": "state", "audit": true },
        { "name": "poller", "type": "PollingService", "worker": "main", "keyed": true, "onEnd": "remove",
          "passivateAfterMs": 30000 },
        { "name": "loader", "type": "DataLoader", "worker": "main", "onEnd": "restart",
          "restart": { "intensity": 3, "periodMs": 2000, "backoff": { "initialMs": 10, "maxMs": 20 } } }
      ],
      "io": [{ "request": "Authenticate", "worker": "main", "timeoutMs": 700, "machines": ["auth"] }],
      "routes": [{ "from": "auth", "when": "signedIn", "to": "loader", "event": "load" }],
      "heartbeat": { "intervalMs": 100, "timeoutMs": 900 },
      "queues": { "mailboxCapacity": 11, "workerOutbox": 12, "workerOutboxBytes": 13, "clientOutbox": 14, "clientOutboxBytes": 15,
                  "watcherOutbox": 16, "watcherOutboxBytes": 17 },
      "ioLimits": { "timeoutMs": 700, "concurrentPerWorker": 7 },
      "security": { "coordinatorKey": "keys/coordinator.key_secret",
                    "clients": [{ "key": "keys/ops.key", "roles": ["read", "send"], "machines": ["auth"] }] },
      "durability": { "directory": "probe-data", "snapshotEvery": 10, "flush": "disk",
                      "postgres": { "url": "postgres://grove@127.0.0.1:5432/grove", "passwordFile": "probe.password" },
                      "handoff": { "graceMs": 2000 } },
      "audit": { "directory": "probe-audit", "states": true, "flush": "disk" },
      "poison": { "quarantineAfter": 3, "suspendAfter": 4, "periodMs": 5000 },
      "limits": { "addressBytes": 512, "payloadBytes": 4096, "messageBytes": 8192, "batchEnvelopes": 300, "instancesPerMachine": 9, "watcherSubscriptions": 8,
                  "subscriptions": 16, "owedBytesPerClient": 1000, "owedBytes": 2000, "watchedStateBytes": 3000, "publicationBytes": 4000 },
      "metrics": { "listen": "127.0.0.1:9464" },
      "view": { "listen": "127.0.0.1:8420" }
    }
    """#

    /// Probes of one key that would be unfair, and why.
    static let unprobed: [String: String] = [:]

    /// Keys the decoder reads but does not keep: values may differ without the topology differing.
    static let ignored: Set = ["$.$schema"]

    let validator: SchemaValidator
    let places: [Place]
    let base: JSONValue

    static func make() throws -> ConformanceProbe {
        let data = try Data(contentsOf: repository.appendingPathComponent("docs/topology.schema.json"))
        guard case .object(let root) = try JSONDecoder().decode(JSONValue.self, from: data) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        let validator = SchemaValidator(root: root)
        var places: [Place] = []
        func walk(_ node: JSONValue, at place: String) {
            let schema = validator.resolved(node)
            if case .object(let properties)? = schema["properties"] {
                let resolved = properties.mapValues { validator.resolved($0) }
                places.append(Place(name: place, schema: schema, properties: resolved))
                for (key, child) in properties.sorted(by: { $0.key < $1.key }) { walk(child, at: place + "." + key) }
            }
            if let items = schema["items"] { walk(items, at: place + "[]") }
        }
        walk(.object(root), at: "$")
        let base = try JSONDecoder().decode(JSONValue.self, from: Data(baseText.utf8))
        return ConformanceProbe(validator: validator, places: places, base: base)
    }

    // MARK: - Documents

    /// Every object in the base at `place`, as steps from the root.
    func instances(of place: String) -> [[Step]] {
        var segments: [String?] = []   // nil: every element of an array
        for part in place.split(separator: ".").dropFirst() {
            if part.hasSuffix("[]") { segments += [String(part.dropLast(2)), nil] } else { segments.append(String(part)) }
        }
        func find(_ value: JSONValue, _ rest: ArraySlice<String?>, _ steps: [Step]) -> [[Step]] {
            guard let segment = rest.first else { return (value.objectValue != nil) ? [steps] : [] }
            if let key = segment {
                guard case .object(let members) = value, let child = members[key] else { return [] }
                return find(child, rest.dropFirst(), steps + [.key(key)])
            }
            guard case .array(let elements) = value else { return [] }
            return elements.enumerated().flatMap { find($0.element, rest.dropFirst(), steps + [.index($0.offset)]) }
        }
        return find(base, segments[...], [])
    }

    static func describe(_ steps: [Step]) -> String {
        steps.reduce("$") { text, step in
            switch step {
            case .key(let key): SchemaValidator.path(text, key)
            case .index(let index): "\(text)[\(index)]"
            }
        }
    }

    /// `document` with the value at `steps` set, or removed when `value` is nil.
    static func setting(_ value: JSONValue?, at steps: ArraySlice<Step>, in document: JSONValue) -> JSONValue {
        guard let step = steps.first else { return value ?? document }
        switch (step, document) {
        case (.key(let key), .object(var members)):
            if steps.count == 1 {
                members[key] = value
            } else if let child = members[key] {
                members[key] = setting(value, at: steps.dropFirst(), in: child)
            }
            return .object(members)
        case (.index(let index), .array(var elements)) where elements.indices.contains(index):
            elements[index] = setting(value, at: steps.dropFirst(), in: elements[index])
            return .array(elements)
        case (.key, _), (.index, _):
            return document
        }
    }

    func verdict(on document: JSONValue) -> Verdict {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let schema = validator.failures(of: document)
        do {
            let topology = try Topology(json: try encoder.encode(document), source: "probe", environment: Self.environment)
            return Verdict(schema: schema, decoded: topology, issues: [])
        } catch let error as TopologyError {
            return Verdict(schema: schema, decoded: nil, issues: error.issues)
        } catch {
            return Verdict(schema: schema, decoded: nil, issues: [TopologyIssue(.unreadable, at: "$", "\(error)")])
        }
    }

    /// `value` with the defaults the schema states filled in where it leaves keys out.
    func filled(_ value: JSONValue, _ schema: [String: JSONValue]) -> JSONValue {
        switch value {
        case .object(var members):
            guard case .object(let properties)? = schema["properties"] else { return value }
            for (key, property) in properties {
                let property = validator.resolved(property)
                if let present = members[key] {
                    members[key] = filled(present, property)
                } else if let fallback = property["default"] {
                    members[key] = filled(fallback, property)
                }
            }
            return .object(members)
        case .array(let elements):
            guard let items = schema["items"] else { return value }
            return .array(elements.map { filled($0, validator.resolved(items)) })
        case .null, .bool, .number, .integer, .string:
            return value
        }
    }
}
