package gateway

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/agenthub/hub/gen/hub/v1"
)

func statusCode(err error) codes.Code { return status.Code(err) }

// enumFieldRE finds the field named in protojson's refusal of an enum value
// it does not know ("invalid value for enum field priority: \"critical\"").
var enumFieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`invalid value for enum field (\w+)`) })

// enumChoices are the values each enum field of a request body takes, by
// field name, for the refusal of an unknown one.
var enumChoices = map[string]string{"priority": enumValues(hubv1.Priority_name)}

// enumValues lists an enum's names but the unspecified zero, by number.
func enumValues(names map[int32]string) string {
	nums := make([]int32, 0, len(names))
	for n := range names {
		if n != 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = names[n]
	}
	return strings.Join(out, ", ")
}

// explainEnum adds the allowed values to the refusal of a request body
// whose enum field holds an unknown name; other errors pass unchanged.
func explainEnum(err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		return err
	}
	m := enumFieldRE().FindStringSubmatch(st.Message())
	if m == nil || enumChoices[m[1]] == "" {
		return err
	}
	return status.Error(codes.InvalidArgument, fmt.Sprintf("%s: %s takes one of %s", st.Message(), m[1], enumChoices[m[1]]))
}
