import GroveWire

extension TopologyDecoder {
    static let metricsExample = #"{ "listen": "127.0.0.1:9464" }"#

    /// `"metrics"`: where the coordinator serves Prometheus metrics; off when absent.
    mutating func decodeMetricsSettings(in root: [String: JSONValue]) -> Topology.MetricsSettings? {
        let field = Field("listen", "\"127.0.0.1:9464\"", "the loopback host and port where GET /metrics answers")
        let decoded = decodeLoopbackListen(in: root, key: "metrics", known: TopologyKeys.metrics, example: Self.metricsExample, field: field) { host in
            "metrics are served on loopback only for now, and \(JSONValue.string(host)) is not an IPv4 loopback address (127.x.x.x): "
                + "they have no roles yet, so anyone who reaches the port reads them; use 127.0.0.1 and reach it through an ssh tunnel or a local scraper"
        }
        return decoded.map { Topology.MetricsSettings(listen: $0) }
    }

    /// A section `{ "listen": "127.x.x.x:PORT" }` at `key` (metrics, the live view): `.some(nil)`
    /// when absent or without `listen`, `nil` after reporting. `notLoopback` says why another
    /// host is refused.
    mutating func decodeLoopbackListen(in root: [String: JSONValue], key: String, known: [String], example: String, field: Field,
                                       notLoopback: (String) -> String) -> String?? {
        guard let value = root[key] else { return .some(nil) }
        let path = JSONPath.root.appending(key)
        guard let members = members(of: value, at: path, known: known, what: "an object like \(example)") else {
            return nil
        }
        guard let listenValue = members[field.key] else { return .some(nil) }
        let listenPath = path.appending(field.key)
        guard let listen = text(listenValue, field, at: listenPath) else { return nil }
        guard let colon = listen.lastIndex(of: ":"), Self.decimal(listen[listen.index(after: colon)...], max: 65535) != nil else {
            report(.invalidValue, listenPath, "expected host:port, found \(JSONValue.string(listen)); \(field.hint)")
            return nil
        }
        let host = String(listen[..<colon])
        guard Self.isLoopback(host) else {
            report(.invalidValue, listenPath, notLoopback(host))
            return nil
        }
        return .some(listen)
    }

    /// An IPv4 loopback address, `127.x.x.x` (ZeroMQ binds an address, not a name).
    static func isLoopback(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { decimal($0, max: 255) != nil }
    }

    /// Digits only, no leading zero (but `0`), at most `max` (the schema's pattern says the same).
    static func decimal(_ text: Substring, max: Int) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }), text == "0" || text.first != "0",
              let value = Int(text), value <= max else { return nil }
        return value
    }
}
