import GroveCluster
import GroveWire

extension PublicationLog {
    /// What watchers get in place of a publication whose payload is over `limit`: an `error`
    /// `publication-too-large` on the same topic, for the same address, which says what kind of
    /// publication it was and how large, so a watcher sees where a state changed (no silent
    /// gap) and can read it with a `get`. An `error` rather than the publication's own kind:
    /// a `state-changed` without its state would be read as one by watchers that predate it.
    ///
    /// ```json
    /// {"code":"publication-too-large","message":"…","address":"nav/a","kind":"state-changed","bytes":921654,"limit":65536}
    /// ```
    static func tooLarge(_ message: WireMessage, limit: Int) -> WireMessage {
        let kind = message.header.kind
        let bytes = message.payload.count
        let remedy = kind == .stateChanged || kind == .machine
            ? "read the state with a get of the address (fsm-send state)"
            : "the publication is not shown; what it said happened as usual"
        let text = "this \(kind.name) publication's payload is \(bytes) bytes, over limits.publicationBytes (\(limit)), so watchers get "
            + "this in its place; \(remedy), or raise limits.publicationBytes in the topology"
        let payload = #"{"code":"\#(WireError.Code.publicationTooLarge.rawValue)","message":\#(JSONValue.string(text)),"#
            + #""address":\#(JSONValue.string(message.address)),"kind":"\#(kind.name)","bytes":\#(bytes),"limit":\#(limit)}"#
        return WireMessage(Header(.error, correlation: message.header.correlation), address: message.address, payload: Array(payload.utf8))
    }

    /// The most bytes ``tooLarge(_:limit:)`` writes for an address of `addressBytes` bytes
    /// (each escaped to at most 6): what a watcher's queue may hold per publication even when
    /// `limits.publicationBytes` is smaller.
    static func tooLargeBytes(addressBytes: Int) -> Int { Topology.tooLargePublicationBytes(addressBytes: addressBytes) }
}
