import GroveWire

extension TopologyDecoder {
    static let metricsExample = #"{ "listen": "127.0.0.1:9464" }"#

    /// `"metrics"`: where the coordinator serves Prometheus metrics; off when absent.
    mutating func decodeMetricsSettings(in root: [String: JSONValue]) -> Topology.MetricsSettings? {
        guard let value = root["metrics"] else { return Topology.MetricsSettings() }
        let path = JSONPath.root.appending("metrics")
        guard let members = members(of: value, at: path, known: TopologyKeys.metrics, what: "an object like \(Self.metricsExample)") else {
            return nil
        }
        let field = Field("listen", "\"127.0.0.1:9464\"", "the loopback host and port where GET /metrics answers")
        guard let listenValue = members[field.key] else { return Topology.MetricsSettings() }
        let listenPath = path.appending(field.key)
        guard let listen = text(listenValue, field, at: listenPath) else { return nil }
        guard let colon = listen.lastIndex(of: ":"), let port = Self.decimal(listen[listen.index(after: colon)...], max: 65535) else {
            report(.invalidValue, listenPath, "expected host:port, found \(JSONValue.string(listen)); \(field.hint)")
            return nil
        }
        let host = String(listen[..<colon])
        guard Self.isLoopback(host) else {
            report(.invalidValue, listenPath, "metrics are served on loopback only for now, and \(JSONValue.string(host)) is not an IPv4 loopback address (127.x.x.x): "
                + "they have no roles yet, so anyone who reaches the port reads them; use 127.0.0.1 and reach it through an ssh tunnel or a local scraper")
            return nil
        }
        return Topology.MetricsSettings(listen: listen)
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
