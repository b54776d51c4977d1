/// `release` and `returned`: keyed instances handed back to their own worker (docs/PROTOCOL.md,
/// "Handoff"). The coordinator sends the addresses a worker adopted while their worker was lost;
/// the worker answers with those that have left its memory (written to the shared store first),
/// and only then are they routed to their own worker again, which gets them in `returned`.
@_spi(GroveInternal) public struct HandoffRelease: Codable, Sendable, Hashable {
    /// Addresses of keyed instances, `machine/key`.
    public var addresses: [String]
    /// Own workers registered again (coordinator → worker of a direct pool): release every
    /// keyed instance whose own worker is one of these, named in `addresses` or not. In the
    /// answer: those released so. Absent (older builds, other pools): the addresses alone.
    public var homes: [String]?

    public init(addresses: [String], homes: [String]? = nil) {
        self.addresses = addresses
        self.homes = homes
    }

    /// `addresses` sorted, in messages of at most ``pageSize``, `homes` (when any) in the last
    /// one, so that it is answered after every address: none for neither.
    public static func pages(of addresses: [String], homes: [String] = []) -> [HandoffRelease] {
        let sorted = addresses.sorted()
        var pages = stride(from: 0, to: sorted.count, by: pageSize).map { Array(sorted[$0..<min($0 + pageSize, sorted.count)]) }
        if pages.isEmpty, !homes.isEmpty { pages = [[]] }
        return pages.indices.map { index in
            HandoffRelease(addresses: pages[index], homes: index == pages.count - 1 && !homes.isEmpty ? homes : nil)
        }
    }

    /// The most addresses one `release` carries: a worker that adopted more gets several, each
    /// well within `limits.messageBytes` for addresses within `limits.addressBytes`.
    public static let pageSize = 256
}
