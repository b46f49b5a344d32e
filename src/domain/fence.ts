/**
 * The right to write a partition's actor state: the partition and the epoch
 * of the lease its owner holds. The store accepts a write only while `epoch`
 * is still the partition's current epoch, so an owner that lost its lease
 * (paused, partitioned, replaced) can never overwrite its successor's state.
 */
export interface Fence {
  partition: number;
  epoch: number;
}
