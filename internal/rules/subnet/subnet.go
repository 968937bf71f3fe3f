// Package subnet holds how many addresses the twin's subnets hold, as
// constants over the cluster's zones: each zone of the cluster owns one /20
// subnet, whose addresses its instances (and Fargate pods) take. The EC2
// twin hands addresses out of it; a scenario's validation refuses a start
// that does not fit.
package subnet

// AddressesPerZone is how many instances one zone's subnet holds at once:
// 16 third octets of 251 addresses each (.4 to .254; AWS reserves the
// first four and the last address of a subnet).
const AddressesPerZone = OctetsPerZone * HostsPerOctet

// OctetsPerZone is how many third octets a zone's /20 subnet spans.
const OctetsPerZone = 16

// HostsPerOctet is how many addresses of one third octet instances can
// take: .4 to .254.
const HostsPerOctet = 251
