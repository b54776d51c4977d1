import GroveWire

extension TopologyDecoder {
    static let viewExample = #"{ "listen": "127.0.0.1:8420" }"#

    /// `"view"`: where fsm-launch serves the live view; off when absent.
    mutating func decodeViewSettings(in root: [String: JSONValue]) -> Topology.ViewSettings? {
        guard let value = root["view"] else { return Topology.ViewSettings() }
        let path = JSONPath.root.appending("view")
        guard let members = members(of: value, at: path, known: TopologyKeys.view, what: "an object like \(Self.viewExample)") else {
            return nil
        }
        let field = Field("listen", "\"127.0.0.1:8420\"", "the loopback host and port where the live view's page answers")
        guard let listenValue = members[field.key] else { return Topology.ViewSettings() }
        let listenPath = path.appending(field.key)
        guard let listen = text(listenValue, field, at: listenPath) else { return nil }
        guard let colon = listen.lastIndex(of: ":"), Self.decimal(listen[listen.index(after: colon)...], max: 65535) != nil else {
            report(.invalidValue, listenPath, "expected host:port, found \(JSONValue.string(listen)); \(field.hint)")
            return nil
        }
        let host = String(listen[..<colon])
        // Loopback only: a page served in the clear on another interface would carry its
        // token (and what it shows) past this host; reach it through an ssh tunnel instead.
        guard Self.isLoopback(host) else {
            report(.invalidValue, listenPath, "the live view is served on loopback only, and \(JSONValue.string(host)) is not an IPv4 loopback address (127.x.x.x): "
                + "it speaks plain HTTP, so its access token would cross the network in the clear; use 127.0.0.1 and reach it through an ssh tunnel "
                + "(ssh -L 8420:127.0.0.1:8420 HOST)")
            return nil
        }
        return Topology.ViewSettings(listen: listen)
    }
}
