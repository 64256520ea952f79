// Real Quartz (Debian libquartz2-java 2.3.2) reading crons, for the cron-dialect interop test: what a Java
// ElasticJob instance does with the config node's cron (ElasticJob schedules with Quartz's CronExpression).
// Usage: java -cp quartz2.jar QuartzCronPeer.java <startMillis> <count>
// Reads one cron per line on stdin; prints per line "OK <millis> <millis> ..." (the next <count> fire times after
// <startMillis>, in UTC) or "ERROR <message>".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Date;
import java.util.TimeZone;
import org.quartz.CronExpression;

public class QuartzCronPeer {
    public static void main(String[] args) throws Exception {
        long start = Long.parseLong(args[0]);
        int count = Integer.parseInt(args[1]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                CronExpression expression = new CronExpression(line);
                expression.setTimeZone(TimeZone.getTimeZone("UTC"));
                StringBuilder out = new StringBuilder("OK");
                Date after = new Date(start);
                for (int i = 0; i < count; i++) {
                    Date next = expression.getNextValidTimeAfter(after);
                    if (next == null) break;
                    out.append(' ').append(next.getTime());
                    after = next;
                }
                System.out.println(out);
            } catch (Exception e) {
                System.out.println("ERROR " + e.getMessage());
            }
        }
    }
}
