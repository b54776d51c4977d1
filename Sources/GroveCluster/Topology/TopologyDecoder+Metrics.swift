import GroveWire

extension TopologyDecoder {
    static let metricsExample = #"{ "listen": "127.0.0.1:9464" }"#

    /// `"metrics"`: where the coordinator serves Prometheus metrics; off when absent. Off
    /// loopback, or with `requireToken`, each scrape needs a token a client key with the `read`
    /// role over every machine made, so the topology must have client keys (`security`).
    /// - Parameter curve: Whether the topology speaks CURVE (has client keys).
    mutating func decodeMetricsSettings(in root: [String: JSONValue], curve: Bool) -> Topology.MetricsSettings? {
        let field = Field("listen", "\"127.0.0.1:9464\"", "the IPv4 host and port where GET /metrics answers")
        let tokenField = Field("requireToken", "true", "whether each scrape needs a token (fsm-send metrics-token); always so off loopback")
        let decoded = decodeLoopbackListen(in: root, key: "metrics", known: TopologyKeys.metrics, example: Self.metricsExample, field: field,
                                           allowOthers: true) { _ in "" }
        guard let decoded else { return nil }
        let path = JSONPath.root.appending("metrics")
        let members = root["metrics"]?.objectValue ?? [:]
        guard let listen = decoded else {
            if members[tokenField.key] != nil {
                report(.invalidValue, path.appending(tokenField.key), "requireToken without listen: set metrics.listen, or remove requireToken")
            }
            return Topology.MetricsSettings()
        }
        let loopback = Self.isLoopback(String(listen[..<listen.lastIndex(of: ":")!]))
        guard let requireToken = optionalFlag(tokenField, in: members, at: path, default: !loopback) else { return nil }
        if !loopback, !requireToken {
            report(.invalidValue, path.appending(tokenField.key),
                   "metrics on \(JSONValue.string(listen)), off loopback, are read only with a token: "
                       + "remove requireToken (it is true there), or listen on 127.0.0.1 and reach it through a local scraper")
            return nil
        }
        if requireToken, !curve {
            report(.invalidValue, path.appending(loopback ? tokenField.key : field.key),
                   "scrape tokens are made by the topology's client keys (fsm-send metrics-token), and this topology has none: "
                       + "add security with client keys (docs/SECURITY.md), or serve the metrics on 127.0.0.1 without requireToken")
            return nil
        }
        return Topology.MetricsSettings(listen: listen, requireToken: requireToken)
    }

    /// A section `{ "listen": "127.x.x.x:PORT" }` at `key` (metrics, the live view): `.some(nil)`
    /// when absent or without `listen`, `nil` after reporting. `notLoopback` says why another
    /// host is refused; with `allowOthers`, any IPv4 address is taken.
    mutating func decodeLoopbackListen(in root: [String: JSONValue], key: String, known: [String], example: String, field: Field,
                                       allowOthers: Bool = false, notLoopback: (String) -> String) -> String?? {
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
        if allowOthers {
            guard Self.isIPv4(host) else {
                report(.invalidValue, listenPath, "\(JSONValue.string(host)) is not an IPv4 address (ZeroMQ binds an address, not a name): "
                    + "use 127.0.0.1, 0.0.0.0 for every interface, or one of this host's addresses")
                return nil
            }
            return .some(listen)
        }
        guard Self.isLoopback(host) else {
            report(.invalidValue, listenPath, notLoopback(host))
            return nil
        }
        return .some(listen)
    }

    /// An IPv4 loopback address, `127.x.x.x` (ZeroMQ binds an address, not a name).
    static func isLoopback(_ host: String) -> Bool {
        isIPv4(host) && host.hasPrefix("127.")
    }

    /// An IPv4 address in dotted decimal.
    static func isIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { decimal($0, max: 255) != nil }
    }

    /// Digits only, no leading zero (but `0`), at most `max` (the schema's pattern says the same).
    static func decimal(_ text: Substring, max: Int) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ (48...57).contains($0) }), text == "0" || text.first != "0",
              let value = Int(text), value <= max else { return nil }
        return value
    }
}
