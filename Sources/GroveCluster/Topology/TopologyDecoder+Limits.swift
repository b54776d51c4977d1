import Foundation
import GroveWire

extension TopologyDecoder {
    /// `limits`: every key optional, each a whole number of at least 1; `addressBytes` at most
    /// the protocol's 1024, `batchEnvelopes` at most 100,000, and `messageBytes` large enough for
    /// one request of the largest size.
    mutating func decodeLimits(in root: [String: JSONValue]) -> Topology.Limits? {
        let defaults = Topology.Limits()
        guard let value = root["limits"] else { return defaults }
        let path = JSONPath.root.appending("limits")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.limits,
            what: "an object like { \"addressBytes\": 1024, \"payloadBytes\": 1048576, \"instancesPerMachine\": 100000 }"
        ) else { return nil }
        func count(_ key: String, _ fallback: Int, _ meaning: String) -> Int? {
            optionalCount(Field(key, "\(fallback)", meaning), in: members, at: path, default: fallback, minimum: 1)
        }
        let address = count("addressBytes", defaults.addressBytes, "the longest address a request may name, in UTF-8 bytes")
        let payload = count("payloadBytes", defaults.payloadBytes, "the largest payload of one request, in bytes")
        let message = count("messageBytes", defaults.messageBytes, "the largest frame a client or worker may send, a batch's included")
        let batch = count("batchEnvelopes", defaults.batchEnvelopes, "the most envelopes one batch from a client, or between the coordinator and a worker, may hold")
        let instances = count("instancesPerMachine", defaults.instancesPerMachine, "the keyed instances one keyed machine may have")
        let perWatcher = count("watcherSubscriptions", defaults.watcherSubscriptions, "the distinct topic prefixes one watcher's key may subscribe to")
        let subscriptions = count("subscriptions", defaults.subscriptions, "the distinct topic prefixes all watchers may subscribe to")
        let owedPerClient = count("owedBytesPerClient", defaults.owedBytesPerClient, "the bytes of busies owed to one client the coordinator remembers")
        let owed = count("owedBytes", defaults.owedBytes, "the bytes of busies owed to all clients the coordinator remembers")
        let states = count("watchedStateBytes", defaults.watchedStateBytes, "the bytes of watched states kept for snapshot")
        let publication = count("publicationBytes", defaults.publicationBytes,
                                "the largest payload a publication carries; past it watchers are told its size instead")
        guard let address, let payload, let message, let batch, let instances, let perWatcher, let subscriptions, let owedPerClient, let owed,
              let states, let publication else { return nil }
        var limits = Topology.Limits(addressBytes: address, payloadBytes: payload, messageBytes: message, batchEnvelopes: batch,
                                     instancesPerMachine: instances, watcherSubscriptions: perWatcher, subscriptions: subscriptions,
                                     owedBytesPerClient: owedPerClient, owedBytes: owed, watchedStateBytes: states, publicationBytes: publication)
        var valid = true
        if address > WireMessage.maximumAddressLength {
            report(.invalidValue, path.appending("addressBytes"),
                   "addressBytes must be at most \(WireMessage.maximumAddressLength) (the protocol's longest address), found \(address); write it like \"addressBytes\": 256")
            valid = false
        }
        if valid, message < limits.smallestMessageBytes {
            report(.invalidValue, path.appending("messageBytes"),
                   "messageBytes (\(message)) must hold one request of the largest size: payloadBytes (\(payload)) + addressBytes (\(address)) "
                   + "+ \(Topology.Limits.envelopeHeaderBytes) = \(limits.smallestMessageBytes); raise it or lower payloadBytes")
            valid = false
        }
        if batch > Topology.Limits.batchEnvelopesRange.upperBound {
            report(.invalidValue, path.appending("batchEnvelopes"),
                   "batchEnvelopes must be at most \(Topology.Limits.batchEnvelopesRange.upperBound), found \(batch): every envelope of a batch "
                   + "is decided in the one turn that reads it, so a larger batch holds everyone else back; write it like \"batchEnvelopes\": 10000")
            valid = false
        }
        if owedPerClient > owed {
            report(.invalidValue, path.appending("owedBytesPerClient"),
                   "owedBytesPerClient (\(owedPerClient)) is more than owedBytes (\(owed)), the bound for every client together; lower it or raise owedBytes")
            valid = false
        }
        if perWatcher > subscriptions {
            report(.invalidValue, path.appending("watcherSubscriptions"),
                   "watcherSubscriptions (\(perWatcher)) is more than subscriptions (\(subscriptions)), the bound for every watcher together; lower it or raise subscriptions")
            valid = false
        }
        limits.addressBytes = min(address, WireMessage.maximumAddressLength)
        return valid ? limits : nil
    }
}

extension TopologyDecoder {
    /// Reports `text` (a machine name, a route's address, a grant's pattern) when it is not in
    /// Unicode Normalization Form C: the coordinator refuses addresses that are not, so that
    /// grants, which compare bytes, and lookups, which compare Swift strings, agree.
    /// - Returns: Whether it is.
    @discardableResult
    mutating func checkNFC(_ text: String, at path: JSONPath, kind: String) -> Bool {
        guard !MachineAddress.isNFC(text) else { return true }
        report(.invalidValue, path, "the \(kind) \(JSONValue.string(text)) is not in Unicode Normalization Form C (NFC); clients must send "
               + "addresses in NFC, so write it precomposed: \(JSONValue.string(text.precomposedStringWithCanonicalMapping))")
        return false
    }
}
