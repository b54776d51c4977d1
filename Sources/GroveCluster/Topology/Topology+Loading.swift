public import Foundation
import GroveWire

extension Topology {
    /// Loads and validates the topology file at `url`.
    ///
    /// ```swift
    /// let topology = try Topology.load(contentsOf: URL(filePath: "Topologies/load.json"))
    /// ```
    /// - Parameters:
    ///   - url: A topology JSON file.
    ///   - environment: Where the endpoints it leaves out go is read from it: see ``RuntimeDirectory``.
    /// - Throws: ``TopologyError`` listing every problem found, each with its JSON path, or the
    ///   reason the file could not be read.
    public static func load(contentsOf url: URL,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(TopologyError) -> Topology {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let reason = (error as NSError).localizedDescription
            throw TopologyError(source: url.path, issues: [
                TopologyIssue(.unreadable, at: "$", "cannot read the file (\(reason)); check the path and its permissions"),
            ])
        }
        return try Topology(json: data, source: url.path, environment: environment)
    }

    /// Parses and validates a topology document.
    /// - Parameters:
    ///   - data: The JSON text, UTF-8.
    ///   - source: Where it came from, shown before every issue: a file path or a name.
    ///   - environment: Where the endpoints it leaves out go is read from it: sockets in
    ///     `<RuntimeDirectory.path(environment:)>/<name>/`.
    /// - Throws: ``TopologyError`` listing every problem found, each with its JSON path; for text
    ///   that is not JSON, one issue with the line and column.
    public init(json data: Data, source: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(TopologyError) {
        var parser = LocatingJSONParser(Array(data))
        let document: JSONValue
        do {
            document = try parser.parse()
        } catch {
            throw TopologyError(source: source, issues: [
                TopologyIssue(
                    .invalidJSON, at: error.path.description,
                    "invalid JSON at line \(error.line), column \(error.column): \(error.message)"
                ),
            ])
        }
        var decoder = TopologyDecoder(runtimeDirectory: RuntimeDirectory.path(environment: environment))
        for duplicate in parser.duplicateKeys {
            decoder.report(
                .duplicateKey, duplicate.path,
                "key given twice (again at line \(duplicate.line), column \(duplicate.column)); JSON keeps only the last value, so remove one"
            )
        }
        let topology = decoder.decodeTopology(document)
        guard let topology, decoder.issues.isEmpty else {
            throw TopologyError(source: source, issues: decoder.issues)
        }
        self = topology
    }

    /// The topology `fsm-launch` runs when given none: one host, its endpoints sockets in this
    /// user's runtime directory (`<RuntimeDirectory.path()>/default/clients`, …), a `main` worker
    /// with the example machines and an `io` worker executing their io requests:
    /// `Topologies/default.json`, built in (the EmbedDefaultTopology plugin).
    ///
    /// Read anew on each call, since its endpoints follow the environment: a runtime directory
    /// too long for a socket's path is an error naming `GROVE_RUNTIME_DIR`, not a trap.
    /// - Throws: ``TopologyError`` when the endpoints it would use cannot be sockets.
    public static func defaultTopology() throws -> Topology {
        try Topology(json: Data(defaultJSON.utf8), source: "<default topology>")
    }
}
