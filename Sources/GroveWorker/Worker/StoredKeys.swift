/// Which keyed instances this worker's store may hold a record of, so that the first event of a
/// key never used does not cost a store read (issue 37: a worker addressed by a million fresh
/// keys read the store once for each, to find nothing). Pure: the runtime feeds it
/// (`WorkerRuntime+Passivation.swift`).
///
/// Per machine, once it is ``covered(_:by:)``: the addresses the store listed for it then, and
/// every address of it made since (``made(_:machine:)``), in a Bloom filter. An address it does
/// not hold is certainly not in the store; one it holds may be (about one in a hundred fresh
/// keys is read for nothing). A machine not covered is always read, as before.
///
/// Sound only while nothing but this worker writes records it reads: so never for a machine that
/// hands off (``uncover(_:)``), whose records other workers of its pool write.
struct StoredKeys {
    /// The covered machines, by name.
    private(set) var covered: Set<String> = []
    private var filter = ScalableBloomFilter()

    /// Whether the store may hold a record of `address`, an instance of `machine`.
    func mayHold(_ address: String, machine: String) -> Bool {
        !covered.contains(machine) || filter.mayContain(address)
    }

    /// Covers `machine`: `addresses` are all the store holds of it and every instance of it in
    /// memory, made or waiting to be restored; from now on each one made is noted.
    mutating func covered(_ machine: String, by addresses: some Sequence<String>) {
        for address in addresses { filter.insert(address) }
        covered.insert(machine)
    }

    /// `machine` is read from the store again for every key (it hands off now).
    mutating func uncover(_ machine: String) {
        covered.remove(machine)
    }

    /// An instance at `address` of `machine` was made: it may be written from now on.
    mutating func made(_ address: String, machine: String) {
        guard covered.contains(machine) else { return }
        filter.insert(address)
    }
}

/// A Bloom filter that grows: a layer of twice the capacity is added when the last is full, so
/// memory follows the keys held (12 bits per key of capacity, which is up to twice the keys)
/// and the false positive rate stays near the sum of the layers' (about 0.3 % each).
struct ScalableBloomFilter {
    private var layers: [BloomLayer] = []
    /// The capacity of the first layer.
    static let firstCapacity = 65_536

    var count: Int { layers.reduce(0) { $0 + $1.count } }

    func mayContain(_ key: String) -> Bool {
        let hash = key.hashValue
        return layers.contains { $0.mayContain(hash) }
    }

    mutating func insert(_ key: String) {
        let hash = key.hashValue
        // A key held already is not counted again (an instance made anew after it passivated).
        guard !layers.contains(where: { $0.mayContain(hash) }) else { return }
        if layers.isEmpty || layers[layers.count - 1].isFull {
            layers.append(BloomLayer(capacity: layers.last.map { $0.capacity * 2 } ?? Self.firstCapacity))
        }
        layers[layers.count - 1].insert(hash)
    }
}

/// One layer of a ``ScalableBloomFilter``: 12 bits per key of its capacity, 8 probes derived from
/// one 64-bit hash (Kirsch and Mitzenmacher's double hashing), all in one block of 512 bits
/// (Putze, Sanders and Singler's blocked filter): a key costs one cache line to test or note, not
/// eight (a worker noting a million fresh keys missed the cache at each probe), for a false
/// positive rate a little above the unblocked one's (about 0.5 % against 0.3 %).
struct BloomLayer {
    let capacity: Int
    private(set) var count = 0
    private var words: [UInt64]
    /// How many blocks of ``wordsPerBlock`` words it has.
    private let blocks: UInt64

    static let bitsPerKey = 12
    static let probes: UInt64 = 8
    static let wordsPerBlock = 8

    init(capacity: Int) {
        self.capacity = capacity
        let blockBits = Self.wordsPerBlock * 64
        let blocks = max(1, (capacity * Self.bitsPerKey + blockBits - 1) / blockBits)
        self.words = Array(repeating: 0, count: blocks * Self.wordsPerBlock)
        self.blocks = UInt64(blocks)
    }

    var isFull: Bool { count >= capacity }

    func mayContain(_ hash: Int) -> Bool {
        let (block, first, step) = split(hash)
        for probe in 0..<Self.probes {
            let bit = (first &+ probe &* step) & 511
            if words[block + Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
        }
        return true
    }

    mutating func insert(_ hash: Int) {
        let (block, first, step) = split(hash)
        for probe in 0..<Self.probes {
            let bit = (first &+ probe &* step) & 511
            words[block + Int(bit >> 6)] |= 1 << (bit & 63)
        }
        count += 1
    }

    /// The first word of the key's block (the hash's high half picks it), the first probe in
    /// the block and the odd step between probes (9 bits each of the low half).
    private func split(_ hash: Int) -> (block: Int, first: UInt64, step: UInt64) {
        let bits = UInt64(bitPattern: Int64(hash))
        let block = Int((bits >> 32) % blocks) * Self.wordsPerBlock
        return (block, bits & 511, ((bits >> 9) & 511) | 1)
    }
}
