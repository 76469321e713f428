// The capture layer's collector thread: one per active device.
#pragma once

namespace latlab::capture::layer {

struct DeviceData;

// The collector's body (activate_device starts it; vkDestroyDevice stops it
// with DeviceData::stop): reads the layer's timestamps without waiting and
// sends the submit, frame and cost records, then the last ones and the
// EndRecord once stopped.
void collector_main(DeviceData* d);

}  // namespace latlab::capture::layer
