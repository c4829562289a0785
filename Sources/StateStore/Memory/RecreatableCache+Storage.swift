extension RecreatableCache {
    /// A least-recently-used store: a dictionary from key to slot, and an intrusive doubly
    /// linked list threaded through an array of slots by index. Lookups and insertions are
    /// O(1); a hit moves a slot to the front without allocating; removed slots are reused.
    struct Storage {
        struct Slot {
            var key: Key?
            var value: Value?
            var cost: Int
            var previous: Int
            var next: Int
        }

        var index: [Key: Int] = [:]
        var slots: [Slot] = []
        var freeSlots: [Int] = []
        /// Most recently used; -1 when empty.
        var head = -1
        /// Least recently used; -1 when empty.
        var tail = -1
        /// The sum of the entries' costs, each up to `Int.max`: 128 bits, so no number of
        /// entries makes it overflow.
        var totalCost: Int128 = 0
        var statistics = Statistics()

        var count: Int { index.count }

        mutating func value(for key: Key) -> Value? {
            guard let slot = index[key] else {
                statistics.misses += 1
                return nil
            }
            statistics.hits += 1
            moveToFront(slot)
            return slots[slot].value
        }

        /// Inserts or replaces; returns the replaced value so it is released outside the lock.
        mutating func insert(_ value: Value, for key: Key, cost: Int) -> Value? {
            let cost = max(cost, 0)
            if let slot = index[key] {
                let old = slots[slot].value
                totalCost += Int128(cost) - Int128(slots[slot].cost)
                slots[slot].value = value
                slots[slot].cost = cost
                moveToFront(slot)
                return old
            }
            let slot: Int
            if let reused = freeSlots.popLast() {
                slot = reused
                slots[slot] = Slot(key: key, value: value, cost: cost, previous: -1, next: -1)
            } else {
                slot = slots.count
                slots.append(Slot(key: key, value: value, cost: cost, previous: -1, next: -1))
            }
            index[key] = slot
            totalCost += Int128(cost)
            linkAtFront(slot)
            return nil
        }

        mutating func remove(_ key: Key) -> Value? {
            guard let slot = index[key] else { return nil }
            return removeSlot(slot)
        }

        /// Removes least recently used entries until both bounds hold; returns how many and
        /// what they cost (at most `Int.max`), and the values, to be released outside the lock.
        mutating func trim(toCost costBound: Int, count countBound: Int) -> (removed: Int, cost: Int, values: [Value]) {
            var removed = 0
            var cost = 0
            var values: [Value] = []
            while tail >= 0, totalCost > Int128(costBound) || index.count > countBound {
                cost = cost.addingClamped(slots[tail].cost)
                if let value = removeSlot(tail) { values.append(value) }
                removed += 1
            }
            return (removed, cost, values)
        }

        mutating func removeAll() -> (cost: Int, storage: Storage) {
            let cost = Int(clamping: totalCost)
            var emptied = Storage()
            emptied.statistics = statistics
            swap(&self, &emptied)
            return (cost, emptied)
        }

        private mutating func removeSlot(_ slot: Int) -> Value? {
            unlink(slot)
            if let key = slots[slot].key { index.removeValue(forKey: key) }
            totalCost -= Int128(slots[slot].cost)
            let value = slots[slot].value
            slots[slot].key = nil
            slots[slot].value = nil
            slots[slot].cost = 0
            freeSlots.append(slot)
            return value
        }

        private mutating func moveToFront(_ slot: Int) {
            guard head != slot else { return }
            unlink(slot)
            linkAtFront(slot)
        }

        private mutating func linkAtFront(_ slot: Int) {
            slots[slot].previous = -1
            slots[slot].next = head
            if head >= 0 { slots[head].previous = slot }
            head = slot
            if tail < 0 { tail = slot }
        }

        private mutating func unlink(_ slot: Int) {
            let previous = slots[slot].previous
            let next = slots[slot].next
            if previous >= 0 { slots[previous].next = next } else { head = next }
            if next >= 0 { slots[next].previous = previous } else { tail = previous }
            slots[slot].previous = -1
            slots[slot].next = -1
        }
    }
}
