/// `release` and `returned`: keyed instances handed back to their own worker (docs/PROTOCOL.md,
/// "Handoff"). The coordinator sends the addresses a worker adopted while their worker was lost;
/// the worker answers with those that have left its memory (written to the shared store first),
/// and only then are they routed to their own worker again, which gets them in `returned`.
@_spi(GroveInternal) public struct HandoffRelease: Codable, Sendable, Hashable {
    /// Addresses of keyed instances, `machine/key`.
    public var addresses: [String]

    public init(addresses: [String]) {
        self.addresses = addresses
    }

    /// The most addresses one `release` carries: a worker that adopted more gets several, each
    /// well within `limits.messageBytes` for addresses within `limits.addressBytes`.
    public static let pageSize = 256
}
