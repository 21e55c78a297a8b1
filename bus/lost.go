package bus

import "errors"

// ErrOffsetLost is matched (errors.Is) by the error a consumer returns, from Fetch, once a partition's next
// offset fell out of the log's retention: messages were deleted before the group consumed them. It is never
// retried: the consumer stops, and an operator decides (docs/reliability.md, "Retention"). The implementation's
// error names the stream, topic, partition and the offsets lost.
var ErrOffsetLost = errors.New("bus: offsets fell out of retention before they were consumed")
