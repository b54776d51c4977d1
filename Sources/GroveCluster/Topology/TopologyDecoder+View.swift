import GroveWire

extension TopologyDecoder {
    static let viewExample = #"{ "listen": "127.0.0.1:8420" }"#

    /// `"view"`: where fsm-launch serves the live view; off when absent.
    mutating func decodeViewSettings(in root: [String: JSONValue]) -> Topology.ViewSettings? {
        let field = Field("listen", "\"127.0.0.1:8420\"", "the loopback host and port where the live view's page answers")
        // Loopback only: a page served in the clear on another interface would carry its
        // token (and what it shows) past this host; reach it through an ssh tunnel instead.
        let decoded = decodeLoopbackListen(in: root, key: "view", known: TopologyKeys.view, example: Self.viewExample, field: field) { host in
            "the live view is served on loopback only, and \(JSONValue.string(host)) is not an IPv4 loopback address (127.x.x.x): "
                + "it speaks plain HTTP, so its access token would cross the network in the clear; use 127.0.0.1 and reach it through an ssh tunnel "
                + "(ssh -L 8420:127.0.0.1:8420 HOST)"
        }
        return decoded.map { Topology.ViewSettings(listen: $0) }
    }
}
